package io.verbatim.metadatalog.transport;

import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.model.Backoff;
import io.verbatim.net.SigningKey;
import io.verbatim.net.VerifyingKey;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/**
 * Members of one group over loopback: each binds port 0 the first time and its port again on a restart,
 * and every running member learns the others' addresses. Backoff is short so tests reconnect quickly. Each
 * member has a secret of its own ({@link #secretOf}); every member knows the voters {@link #VOTERS} and the
 * listeners {@link #LISTENERS} by their verifying keys.
 */
final class NettyGroup implements AutoCloseable {
    static final List<String> VOTERS = List.of("a", "b", "c", "d", "e");
    static final List<String> LISTENERS = List.of("l1", "l2");
    private static final Map<String, SigningKey> SIGNING = new ConcurrentHashMap<>();
    private final String group;
    private final List<String> members;
    private final Map<String, Integer> ports = new LinkedHashMap<>();
    private final Map<String, NettyRaftTransport> running = new LinkedHashMap<>();

    NettyGroup(String group, String... members) {
        this.group = group;
        this.members = List.of(members);
    }

    static NettyRaftTransport.Builder builder(String member, String group) {
        return NettyRaftTransport.builder(group, keys(member, signing(member)))
                .reconnect(new Backoff(Duration.ofMillis(10), Duration.ofMillis(200), 0.5));
    }

    /** {@code member}'s own secret. */
    static String secretOf(String member) {
        return "the-secret-of-" + member;
    }

    /** The key {@code member}'s secret gives. */
    static SigningKey signing(String member) {
        return SIGNING.computeIfAbsent(member, m -> SigningKey.fromSecret(secretOf(m)));
    }

    static VerifyingKey verifying(String member) {
        return signing(member).verifying();
    }

    /** {@code member} signing with {@code own}, knowing every voter and listener by its key. */
    static MemberKeys keys(String member, SigningKey own) {
        MemberKeys k = MemberKeys.of(member, own);
        for (String v : VOTERS) {
            if (!v.equals(member) || own.verifying().equals(verifying(v))) {
                k = k.withVoter(v, verifying(v));
            }
        }
        for (String l : LISTENERS) {
            if (!l.equals(member) || own.verifying().equals(verifying(l))) {
                k = k.withListener(l, verifying(l));
            }
        }
        return k;
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
