package io.verbatim.metadatalog.transport;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * One member's transport counters, plain and lock-free (the Micrometer view is
 * {@link RaftTransportMetricsBinder}). Bytes are what a message takes on the wire: its serialized size and
 * the 5-byte frame header (TLS records not counted); the in-memory transport counts the same figure.
 */
public final class RaftTransportMetrics {

    /** Why a message was not sent or not delivered. */
    public enum Drop {
        /** The peer's outbound queue held its bound of messages or bytes. */
        QUEUE_FULL,
        /** No connection to the peer: its last connection attempt failed and the next waits out its backoff. */
        NOT_CONNECTED,
        /** Addressed to a member that is not a peer (nor on the network). */
        UNKNOWN_MEMBER,
        /** Larger than the largest frame: not sent, or (received) its connection closed. */
        OVERSIZED,
        /** Not a Raft message (no body, not decodable): its connection closed. */
        MALFORMED,
        /** Arrived on a connection that had not passed the handshake. */
        UNAUTHENTICATED,
        /** Names as its sender another member than the one that sent it. */
        SPOOFED_SENDER,
        /** From a member named a listener, a message only a voter sends (a vote, an append, a snapshot...). */
        LISTENER_AS_VOTER,
        /** Of another Raft group. */
        WRONG_GROUP,
        /** Received, but addressed to another member. */
        MISADDRESSED,
        /** Received while {@code inbound()} held its bound of undelivered messages. */
        INBOUND_OVERFLOW,
        /** Sent after {@code close()}. */
        CLOSED,
        /** Between two members a fault partitions (in-memory network). */
        PARTITIONED,
        /** Lost to the drop probability of a fault (in-memory network). */
        INJECTED;

        /** The tag value: lower case ({@code queue_full}). */
        public String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Why a server closed a connection before, or instead of, taking messages from it. */
    public enum Refusal {
        /** The client's signature is not the one of the member its handshake names. */
        BAD_SIGNATURE,
        /** The handshake names a member that is not a peer (or whose verifying key is not known). */
        UNKNOWN_MEMBER,
        /** The handshake names another group. */
        WRONG_GROUP,
        /** Under TLS, the certificate's name (CN) is not the member the handshake names. */
        CERTIFICATE_MISMATCH,
        /** The first frame is not a handshake (garbage, another protocol, a message first). */
        BAD_HANDSHAKE,
        /** No handshake within the handshake timeout. */
        NO_HANDSHAKE,
        /** The TLS handshake failed (no certificate, an untrusted one, not TLS at all). */
        TLS,
        /** The port held its maximum of connections. */
        OVER_LIMIT;

        public String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final String member;
    private final Map<String, Peer> peers = new ConcurrentHashMap<>();
    private final Map<Drop, LongAdder> drops = new EnumMap<>(Drop.class);
    private final Map<Refusal, LongAdder> refusals = new EnumMap<>(Refusal.class);
    private final AtomicInteger connectionsOpen = new AtomicInteger();
    private final CopyOnWriteArrayList<Consumer<String>> newPeerListeners = new CopyOnWriteArrayList<>();

    RaftTransportMetrics(String member) {
        this.member = member;
        for (Drop d : Drop.values()) {
            drops.put(d, new LongAdder());
        }
        for (Refusal r : Refusal.values()) {
            refusals.put(r, new LongAdder());
        }
    }

    private static final class Peer {
        final LongAdder messagesSent = new LongAdder();
        final LongAdder bytesSent = new LongAdder();
        final LongAdder messagesReceived = new LongAdder();
        final LongAdder bytesReceived = new LongAdder();
        final LongAdder reconnects = new LongAdder();
    }

    /** The member these counters are of. */
    public String member() {
        return member;
    }

    /** Every peer counted so far (sent to, received from, or configured). */
    public Set<String> peers() {
        return Set.copyOf(peers.keySet());
    }

    public long messagesSent(String peer) {
        Peer p = peers.get(peer);
        return p == null ? 0 : p.messagesSent.sum();
    }

    /** Bytes handed to the connection to {@code peer} (the leader-egress figure). */
    public long bytesSent(String peer) {
        Peer p = peers.get(peer);
        return p == null ? 0 : p.bytesSent.sum();
    }

    public long messagesReceived(String peer) {
        Peer p = peers.get(peer);
        return p == null ? 0 : p.messagesReceived.sum();
    }

    public long bytesReceived(String peer) {
        Peer p = peers.get(peer);
        return p == null ? 0 : p.bytesReceived.sum();
    }

    /** Connection attempts to {@code peer} after its first. */
    public long reconnects(String peer) {
        Peer p = peers.get(peer);
        return p == null ? 0 : p.reconnects.sum();
    }

    public long dropped(Drop reason) {
        return counter(reason).sum();
    }

    /** Every drop, whatever the reason. */
    public long dropped() {
        return drops.values().stream().mapToLong(LongAdder::sum).sum();
    }

    public long refused(Refusal reason) {
        return counter(reason).sum();
    }

    /** Every refused connection, whatever the reason. */
    public long refused() {
        return refusals.values().stream().mapToLong(LongAdder::sum).sum();
    }

    /** Inbound connections open now (0 in memory). */
    public int connectionsOpen() {
        return connectionsOpen.get();
    }

    void sent(String peer, int bytes) {
        Peer p = peer(peer);
        p.messagesSent.increment();
        p.bytesSent.add(bytes);
    }

    void received(String peer, int bytes) {
        Peer p = peer(peer);
        p.messagesReceived.increment();
        p.bytesReceived.add(bytes);
    }

    void reconnect(String peer) {
        peer(peer).reconnects.increment();
    }

    void drop(Drop reason) {
        counter(reason).increment();
    }

    void drop(Drop reason, int count) {
        counter(reason).add(count);
    }

    void refuse(Refusal reason) {
        counter(reason).increment();
    }

    void connectionOpened() {
        connectionsOpen.incrementAndGet();
    }

    void connectionClosed() {
        connectionsOpen.decrementAndGet();
    }

    /** Registers {@code peer} so its meters exist before its first message. */
    void knowPeer(String peer) {
        peer(peer);
    }

    /** {@code listener} is told of each peer counted from now on (the binder registers its meters). */
    void onNewPeer(Consumer<String> listener) {
        newPeerListeners.add(listener);
    }

    /** Every reason has its counter from the start. */
    private LongAdder counter(Drop reason) {
        return Objects.requireNonNull(drops.get(reason), "the counter of every drop reason");
    }

    private LongAdder counter(Refusal reason) {
        return Objects.requireNonNull(refusals.get(reason), "the counter of every refusal reason");
    }

    private Peer peer(String peer) {
        Peer p = peers.get(peer);
        if (p != null) {
            return p;
        }
        Peer[] created = new Peer[1];
        p = peers.computeIfAbsent(peer, k -> created[0] = new Peer());
        if (created[0] != null) {
            newPeerListeners.forEach(l -> l.accept(peer));
        }
        return p;
    }
}
