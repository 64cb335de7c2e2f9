package io.verbatim.metastore.transport;

import io.verbatim.model.Backoff;
import io.verbatim.net.Token;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Members of one group over loopback: each binds port 0 the first time and its port again on a restart,
 * and every running member learns the others' addresses. Backoff is short so tests reconnect quickly.
 */
final class NettyGroup implements AutoCloseable {
    static final String SECRET = "the-group-secret";
    private final String group;
    private final List<String> members;
    private final Map<String, Integer> ports = new LinkedHashMap<>();
    private final Map<String, NettyRaftTransport> running = new LinkedHashMap<>();

    NettyGroup(String group, String... members) {
        this.group = group;
        this.members = List.of(members);
    }

    static NettyRaftTransport.Builder builder(String member, String group) {
        return NettyRaftTransport.builder(member, group, Token.clear(SECRET))
                .reconnect(new Backoff(Duration.ofMillis(10), Duration.ofMillis(200), 0.5));
    }

    synchronized NettyRaftTransport start(String member, UnaryOperator<NettyRaftTransport.Builder> configure) {
        NettyRaftTransport t = configure.apply(builder(member, group)
                .bind("127.0.0.1", ports.getOrDefault(member, 0)).peers(addresses())).start();
        ports.put(member, t.port());
        running.put(member, t);
        Map<String, String> all = addresses();
        running.values().forEach(r -> r.updatePeers(all));
        return t;
    }

    NettyRaftTransport start(String member) {
        return start(member, b -> b);
    }

    /** Every member that ran, by address; members yet to start are left out. */
    synchronized Map<String, String> addresses() {
        Map<String, String> out = new LinkedHashMap<>();
        ports.forEach((m, p) -> out.put(m, "127.0.0.1:" + p));
        return out;
    }

    List<String> members() {
        return members;
    }

    @Override
    public synchronized void close() {
        running.values().forEach(NettyRaftTransport::close);
        running.clear();
    }
}
