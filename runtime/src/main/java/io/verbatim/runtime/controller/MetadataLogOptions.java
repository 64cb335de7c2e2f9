package io.verbatim.runtime.controller;

import io.verbatim.config.MetadataLogConfig;
import io.verbatim.metadatalog.raft.RaftConfig;
import io.verbatim.metadatalog.server.Group;
import io.verbatim.metadatalog.server.RaftServer;
import io.verbatim.metadatalog.storage.RaftStorage;
import java.nio.file.Path;
import java.util.Optional;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The configuration's {@code metadataLog} resolved into what a member of a cluster's metadata log starts
 * with, the same for every member this process runs ({@link LocalMetadataLog}'s in one process,
 * {@link NetworkedMember}'s over TCP): its core settings, its driver's timing, where it keeps its log, and
 * the warning when it runs on a group other than the YAML's.
 */
final class MetadataLogOptions {
    private static final Logger LOG = Loggers.getLogger(MetadataLogOptions.class);

    private MetadataLogOptions() {
    }

    /**
     * Member {@code member} of group {@code cluster}'s core settings, on the configuration's timing, with
     * listener delegation as {@code log} sets it (a revoked delegation is restored at the earliest one
     * reassignment interval later, at a re-check that finds its follower healthy).
     */
    static RaftConfig raft(String member, String cluster, MetadataLogConfig log) {
        MetadataLogConfig.Timing timing = log.timing();
        return RaftConfig.defaults(member, cluster).withElectionTicks(timing.electionTicks())
                .withHeartbeatTicks(timing.heartbeatTicks()).withDelegationEnabled(log.enabled())
                .withMaxListenersPerFollower(log.maxListenersPerFollower())
                .withFollowerLagThreshold(log.followerLagThreshold()).withReassignmentTicks(log.reassignmentTicks())
                .withRevocationCooldownTicks(log.reassignmentTicks()).withLogTailEntries(timing.logTailEntries());
    }

    /**
     * Member {@code member} of {@code cluster}'s log on {@code log}'s settings and timing, starting from
     * {@code group}: what is left to name is its storage, transport, state machine, scheduler and seed.
     */
    static RaftServer.Builder member(String cluster, String member, MetadataLogConfig log, Group group) {
        MetadataLogConfig.Timing timing = log.timing();
        return RaftServer.builder(raft(member, cluster, log)).group(group).tick(timing.tick())
                .snapshotEvery(timing.snapshotEvery()).readTimeout(timing.readTimeout());
    }

    /** Member {@code member}'s log under {@code <dataDir>/metadata/<member>}, in memory without a data directory. */
    static RaftStorage storage(Optional<Path> dataDir, String member) {
        return RaftStorage.at(dataDir.map(d -> d.resolve("metadata").resolve(member)));
    }

    /**
     * Warns when {@code server}, just started from {@code configured}, runs on the group its log holds
     * instead (the log's configuration wins: see {@link Delegations#drift}).
     */
    static void warnOnDrift(String cluster, Group configured, RaftServer server) {
        Delegations.drift(configured, server.memberStatus().group()).ifPresent(d -> LOG.warn(
                "{}/{}: its metadata log runs on the configuration it holds, not the YAML's: {}", cluster,
                server.memberStatus().memberId(), d));
    }
}
