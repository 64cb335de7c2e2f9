package io.verbatim.metadatalog.transport;

import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;
import reactor.core.scheduler.Scheduler;

/**
 * Members of one Raft group in one process, joined by id ({@link #join}), and the faults between them.
 * Delivery is asynchronous on the given scheduler (a {@code VirtualTimeScheduler} makes it run when a test
 * advances time) and in order per pair of members, as over TCP: each pair has its own worker and queue.
 * Faults, all drawn from the given seeded generator so a run repeats: a drop probability, a duplication
 * probability, a delay drawn uniformly in {@code [min, max]} (order per pair kept), partitions between two
 * members and isolation of one (checked when a message is sent and again when it arrives).
 */
public final class MemoryNetwork {
    /** The default bound on the messages in flight from one member to another. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 1024;
    private final String group;
    private final Scheduler scheduler;
    private final RandomGenerator random;
    private final int maxInFlight;
    private final int inboundBuffer;
    // guarded by this
    private final Map<String, MemoryRaftTransport> members = new HashMap<>();
    private final Set<String> known = new HashSet<>();
    private final Map<String, Pair> pairs = new HashMap<>();
    private final Set<String> cuts = new HashSet<>();
    private final Set<String> isolated = new HashSet<>();
    private double dropProbability;
    private double duplicateProbability;
    private long minDelayNanos;
    private long maxDelayNanos;

    /** A network for {@code group} with {@link #DEFAULT_MAX_IN_FLIGHT} and 4,096 undelivered inbound messages. */
    public MemoryNetwork(String group, Scheduler scheduler, RandomGenerator random) {
        this(group, scheduler, random, DEFAULT_MAX_IN_FLIGHT, 4096);
    }

    /**
     * @param maxInFlight per pair of members, the messages sent and not yet delivered; beyond, dropped
     *        ({@code queue_full})
     * @param inboundBuffer per member, the messages delivered and not yet taken by {@code inbound()} (Reactor
     *        rounds it up to a power of two, at least 8)
     */
    public MemoryNetwork(String group, Scheduler scheduler, RandomGenerator random, int maxInFlight,
            int inboundBuffer) {
        if (maxInFlight < 1 || inboundBuffer < 1) {
            throw new IllegalArgumentException("maxInFlight " + maxInFlight + " and inboundBuffer " + inboundBuffer
                    + " must be at least 1");
        }
        this.group = group;
        this.scheduler = scheduler;
        this.random = random;
        this.maxInFlight = maxInFlight;
        this.inboundBuffer = inboundBuffer;
    }

    /**
     * {@code member}'s transport on this network.
     *
     * @throws IllegalStateException when a transport of {@code member} is open on it already
     */
    public synchronized MemoryRaftTransport join(String member) {
        if (members.containsKey(member)) {
            throw new IllegalStateException("member " + member + " is on this network already; close it first");
        }
        MemoryRaftTransport t = new MemoryRaftTransport(member, this, new InboundSink(inboundBuffer));
        members.put(member, t);
        known.add(member);
        return t;
    }

    public String group() {
        return group;
    }

    /** Each message is lost with probability {@code p} ({@code injected}). */
    public synchronized MemoryNetwork dropProbability(double p) {
        this.dropProbability = probability("dropProbability", p);
        return this;
    }

    /** Each message delivered is delivered a second time with probability {@code p}. */
    public synchronized MemoryNetwork duplicateProbability(double p) {
        this.duplicateProbability = probability("duplicateProbability", p);
        return this;
    }

    /** Each message takes a delay drawn uniformly in {@code [min, max]} (0, 0: none). */
    public synchronized MemoryNetwork delay(Duration min, Duration max) {
        if (min.isNegative() || max.compareTo(min) < 0) {
            throw new IllegalArgumentException("delay [" + min + ", " + max + "] is not a range of durations");
        }
        this.minDelayNanos = min.toNanos();
        this.maxDelayNanos = max.toNanos();
        return this;
    }

    /** No message passes between {@code a} and {@code b}, either way ({@code partitioned}). */
    public synchronized void partition(String a, String b) {
        cuts.add(cut(a, b));
    }

    public synchronized void heal(String a, String b) {
        cuts.remove(cut(a, b));
    }

    /** No message passes between {@code member} and any other. */
    public synchronized void isolate(String member) {
        isolated.add(member);
    }

    /** Ends every partition and isolation. */
    public synchronized void healAll() {
        cuts.clear();
        isolated.clear();
    }

    /** Whether a message may pass from {@code a} to {@code b} now. */
    public synchronized boolean connected(String a, String b) {
        return !isolated.contains(a) && !isolated.contains(b) && !cuts.contains(cut(a, b));
    }

    /** From {@code from}'s transport: the checks, the faults, then the delivery on the pair's worker. */
    void send(MemoryRaftTransport from, String to, RaftMessageProto message) {
        RaftTransportMetrics metrics = from.metrics();
        int bytes = Frames.messageFrameBytes(message);
        MemoryRaftTransport target;
        Pair pair;
        int copies;
        long delay;
        synchronized (this) {
            target = members.get(to);
            if (target == null || to.equals(from.member())) {
                metrics.drop(known.contains(to) && !to.equals(from.member()) ? Drop.NOT_CONNECTED : Drop.UNKNOWN_MEMBER);
                return;
            }
            if (!connected(from.member(), to)) {
                metrics.drop(Drop.PARTITIONED);
                return;
            }
            if (dropProbability > 0 && random.nextDouble() < dropProbability) {
                metrics.drop(Drop.INJECTED);
                return;
            }
            copies = duplicateProbability > 0 && random.nextDouble() < duplicateProbability ? 2 : 1;
            // at least 1 ns: never delivered on the sender's stack, even by a virtual-time scheduler
            delay = Math.max(1, maxDelayNanos == 0 ? 0
                    : minDelayNanos + (long) (random.nextDouble() * (maxDelayNanos - minDelayNanos)));
            pair = pairs.computeIfAbsent(from.member() + "\u0000" + to, k -> new Pair(scheduler.createWorker()));
        }
        if (pair.inFlight.addAndGet(copies) > maxInFlight) {
            pair.inFlight.addAndGet(-copies);
            metrics.drop(Drop.QUEUE_FULL);
            return;
        }
        metrics.sent(to, bytes);
        for (int i = 0; i < copies; i++) {
            pair.queue.add(new Envelope(from.member(), target, message, bytes));
            // each task delivers the head, whichever message scheduled it: order per pair holds whatever the delays
            pair.worker.schedule(() -> arrive(pair), delay, TimeUnit.NANOSECONDS);
        }
    }

    private void arrive(Pair pair) {
        Envelope e = pair.queue.poll();
        if (e == null) {
            return;
        }
        pair.inFlight.decrementAndGet();
        if (!connected(e.from, e.to.member())) {
            e.to.metrics().drop(Drop.PARTITIONED);
            return;
        }
        e.to.deliver(e.from, e.message, e.bytes);
    }

    /** {@code member}'s transport closed: off the network, its pairs' workers released. */
    synchronized void leave(MemoryRaftTransport member) {
        members.remove(member.member(), member);
        pairs.entrySet().removeIf(en -> {
            String[] ends = en.getKey().split("\u0000", 2);
            boolean gone = ends[0].equals(member.member());
            if (gone) {
                en.getValue().worker.dispose();
            }
            return gone;
        });
    }

    private static String cut(String a, String b) {
        return a.compareTo(b) < 0 ? a + "\u0000" + b : b + "\u0000" + a;
    }

    private static double probability(String name, double p) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException(name + " is " + p + ": must be within [0, 1]");
        }
        return p;
    }

    private record Envelope(String from, MemoryRaftTransport to, RaftMessageProto message, int bytes) {
    }

    private static final class Pair {
        final Scheduler.Worker worker;
        final ConcurrentLinkedQueue<Envelope> queue = new ConcurrentLinkedQueue<>();
        final AtomicInteger inFlight = new AtomicInteger();

        Pair(Scheduler.Worker worker) {
            this.worker = worker;
        }
    }
}
