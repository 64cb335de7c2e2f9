package io.verbatim.runtime.status;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.verbatim.exchange.ClusterStatus;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.metadatalog.state.OwnershipTable;
import io.verbatim.metadatalog.state.RegisteredMember;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.metadatalog.state.SegmentOwner;
import io.verbatim.pipeline.ReplicatorStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A node's status: its controller's side of the exchange ({@link ClusterStatus}) and its replicators,
 * how many, their restarts, and each one failing or stalled now; its metadata log's members; and, where a member here
 * leads the log, who feeds each listener (listener delegation). In JSON the cluster status's fields come
 * first, with {@code replicators}, {@code metadataLog} and {@code listenerFeeds} beside them.
 */
@JsonPropertyOrder({"exchange", "replicators", "metadataLog", "listenerFeeds", "storage", "ownership"})
public record NodeStatus(@JsonUnwrapped ClusterStatus exchange, Replicators replicators,
        List<MetadataLogMember> metadataLog, List<ListenerFeed> listenerFeeds, Storage storage,
        @JsonIgnore Ownership ownership) {

    public NodeStatus {
        metadataLog = List.copyOf(metadataLog);
        listenerFeeds = List.copyOf(listenerFeeds);
    }

    /** Without segments' ownership (a cluster of one broker process). */
    public NodeStatus(ClusterStatus exchange, Replicators replicators, List<MetadataLogMember> metadataLog,
            List<ListenerFeed> listenerFeeds, Storage storage) {
        this(exchange, replicators, metadataLog, listenerFeeds, storage, Ownership.NONE);
    }

    /** In JSON only for a cluster of many broker processes. */
    @JsonProperty("ownership")
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @Nullable Ownership ownershipJson() {
        return ownership.equals(Ownership.NONE) ? null : ownership;
    }

    /** This status with {@code value} as its ownership. */
    public NodeStatus withOwnership(Ownership value) {
        return new NodeStatus(exchange, replicators, metadataLog, listenerFeeds, storage, value);
    }

    /** A status of a process that keeps no segments (a controller replica). */
    public NodeStatus(ClusterStatus exchange, Replicators replicators, List<MetadataLogMember> metadataLog,
            List<ListenerFeed> listenerFeeds) {
        this(exchange, replicators, metadataLog, listenerFeeds, Storage.NONE);
    }

    /** A status without a metadata log (a node on a layout store of its caller's). */
    public NodeStatus(ClusterStatus exchange, Replicators replicators) {
        this(exchange, replicators, List.of(), List.of());
    }

    /**
     * Where this process keeps the segments, and whether that works now.
     *
     * @param type {@code memory} (the embedded storage without a data directory: a stop loses it), {@code
     *     embedded} (with one), {@code pulsar}, or {@code none} (a process that keeps no segments)
     * @param durable whether what it acknowledged survives a crash of this process
     * @param failure why the embedded storage's journal failed ({@code ""}: it did not): nothing is acknowledged
     *     until a restart (produce calls 503, ingest UNAVAILABLE)
     */
    @JsonPropertyOrder({"type", "durable", "failure"})
    public record Storage(String type, boolean durable, String failure) {
        static final Storage NONE = new Storage("none", false, "");
    }

    /**
     * Who owns the cluster's segments when it names its broker members, as this process's replica of the
     * metadata log has applied it.
     *
     * @param member this process's broker member ({@code ""}: a controller replica)
     * @param leaseRemainingMs how long its lease still holds ({@code -1}: not a broker member)
     * @param acting the segments it acts on now ({@code topic#segment})
     * @param epoch the ownership's epoch (the index of the entry that last changed it; 0: none yet)
     * @param members each broker member with its state, how many segments it owns and their bytes per second
     *        (bytes: on the controller leader, which has the reports; else -1)
     * @param moving the segments being handed over or without an owner now
     */
    @JsonPropertyOrder({"member", "leaseRemainingMs", "acting", "epoch", "members", "moving"})
    public record Ownership(String member, long leaseRemainingMs, List<String> acting, long epoch, List<Member> members,
            List<Segment> moving) {
        /** A cluster of one broker process: nothing to say. */
        public static final Ownership NONE = new Ownership("", -1, List.of(), 0, List.of(), List.of());

        public Ownership {
            acting = List.copyOf(acting);
            members = List.copyOf(members);
            moving = List.copyOf(moving);
        }

        /** One broker member: its state, how many segments it owns, their bytes per second ({@code -1}: unknown). */
        @JsonPropertyOrder({"id", "state", "segments", "bytesPerSecond"})
        public record Member(String id, String state, int segments, long bytesPerSecond) {
        }

        /** A segment not simply owned: being released to {@code to}, or unowned. */
        @JsonPropertyOrder({"segment", "phase", "owner", "to", "epoch"})
        public record Segment(String segment, String phase, String owner, String to, long epoch) {
        }

        /** From a replica's {@code table}; {@code bytesPerSecond} per segment where known (else empty). */
        public static Ownership of(String member, long leaseRemainingMs, List<String> acting, OwnershipTable table,
                Optional<Map<SegmentKey, Long>> bytesPerSecond) {
            List<Member> members = new ArrayList<>();
            for (RegisteredMember m : table.members().values()) {
                List<SegmentKey> owned = table.ownedBy(m.id());
                long bytes = bytesPerSecond.map(b -> owned.stream().mapToLong(k -> b.getOrDefault(k, 0L)).sum())
                        .orElse(-1L);
                members.add(new Member(m.id(), m.state().name(), owned.size(), bytes));
            }
            List<Segment> moving = table.segments().values().stream()
                    .filter(o -> o.phase() != SegmentOwner.Phase.OWNED)
                    .map(o -> new Segment(o.segment().toString(), o.phase().name(), o.owner(), o.to(), o.epoch()))
                    .toList();
            return new Ownership(member, leaseRemainingMs, acting, table.epoch(), members, moving);
        }
    }

    /**
     * Who feeds one listener, as the leader sees it.
     *
     * @param assignedTo the follower the admin assigned it to ({@code ""}: none, the leader feeds it)
     * @param source who feeds it now: the leader or the delegate follower
     * @param delegated whether its delegate feeds it now (else the leader does)
     * @param revoked whether the leader revoked the admin's delegation and feeds it itself
     * @param revocationReason why, when revoked
     * @param revocations how many times this leader revoked it
     * @param lag entries between the leader's commit and what the listener is known to hold
     */
    @JsonPropertyOrder({"listener", "assignedTo", "source", "delegated", "revoked", "revocationReason", "revocations",
            "lag"})
    public record ListenerFeed(String listener, String assignedTo, String source, boolean delegated, boolean revoked,
            String revocationReason, long revocations, long lag) {
    }


    /**
     * One member of the cluster's metadata log, as it reports itself, with the leader's view of how far
     * behind it is.
     *
     * @param role LEADER, CANDIDATE, FOLLOWER or LISTENER
     * @param leader the leader it knows in its term ({@code ""}: none)
     * @param lag entries between the leader's last index and what the leader knows this member holds
     *     ({@code -1}: the leader has no view of it, or there is no leader)
     */
    @JsonPropertyOrder({"id", "role", "term", "leader", "commitIndex", "appliedIndex", "lastIndex", "lag"})
    public record MetadataLogMember(String id, String role, long term, String leader, long commitIndex,
            long appliedIndex, long lastIndex, long lag) {

        /** Every member of {@code statuses}, the lags from the leader of the highest term among them. */
        public static List<MetadataLogMember> members(List<MemberStatus> statuses) {
            Optional<MemberStatus> leader = statuses.stream().filter(MemberStatus::leads)
                    .max(Comparator.comparingLong(MemberStatus::term));
            return statuses.stream().map(s -> new MetadataLogMember(s.memberId(), s.role().name(), s.term(), s.leader(),
                    s.commitIndex(), s.appliedIndex(), s.lastIndex(), leader.map(l -> lag(l, s.memberId())).orElse(-1L)))
                    .toList();
        }

        private static long lag(MemberStatus leader, String member) {
            if (leader.memberId().equals(member)) {
                return 0;
            }
            return leader.peers().stream().filter(p -> p.id().equals(member)).findFirst()
                    .map(p -> Math.max(0, leader.lastIndex() - p.matchIndex())).orElse(-1L);
        }
    }

    /**
     * Every replicator of every topic toward every peer, summed.
     *
     * @param restarts how often their links restarted them after a failure
     * @param failing each one that failed and has not made progress since
     * @param stalled each one with backlog that acknowledged nothing for {@code replication.stallAfter}: one that
     *        rewinds and reconnects across a partition stands still without failing
     */
    @JsonPropertyOrder({"total", "restarts", "failing", "stalled"})
    public record Replicators(int total, long restarts, @JsonIgnore List<ReplicatorStatus> failing,
            @JsonIgnore List<ReplicatorStatus> stalled) {

        public Replicators {
            failing = List.copyOf(failing);
            stalled = List.copyOf(stalled);
        }

        /** The summary of {@code all}. */
        public static Replicators of(List<ReplicatorStatus> all) {
            return new Replicators(all.size(), all.stream().mapToLong(ReplicatorStatus::restarts).sum(),
                    all.stream().filter(ReplicatorStatus::failing).toList(),
                    all.stream().filter(ReplicatorStatus::stalled).toList());
        }

        @JsonProperty("failing")
        List<Failing> failingJson() {
            return failing.stream().map(f -> new Failing(f.id(), f.state().name(), f.consecutiveFailures(),
                    f.restarts(), f.lastError().orElse(null))).toList();
        }

        @JsonProperty("stalled")
        List<Stalled> stalledJson() {
            return stalled.stream().map(s -> new Stalled(s.id(), s.state().name(),
                    s.stalledFor().map(Duration::toMillis).orElse(0L), s.backlog(), s.consecutiveFailures(),
                    s.lastError().orElse(null))).toList();
        }
    }

    /** A failing replicator as the JSON shows it (no segment: its id names it). */
    record Failing(String id, String state, int consecutiveFailures, long restarts, @Nullable String lastError) {
    }

    /**
     * A stalled replicator as the JSON shows it.
     *
     * @param stalledForMillis how long it has acknowledged nothing while it had backlog
     * @param backlog the entries waiting
     */
    record Stalled(String id, String state, long stalledForMillis, long backlog, int consecutiveFailures,
            @Nullable String lastError) {
    }
}
