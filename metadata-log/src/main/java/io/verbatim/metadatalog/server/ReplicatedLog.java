package io.verbatim.metadatalog.server;

import com.google.protobuf.ByteString;
import reactor.core.publisher.Mono;

/** A member of a metadata log group as its state machine's users see it: submit commands, read fresh state. */
public interface ReplicatedLog {

    /**
     * Proposes {@code command}; completes with what {@link StateMachine#apply} returned for it once this
     * member applied it. Errors with {@link NotLeaderException} on a member that is not the leader, and
     * with {@link CommandLostException} when a leader change dropped the command before it committed (it did
     * not take effect), and with {@link CommandOutcomeUnknownException} when this member cannot know (it may
     * have taken effect: read before trying again).
     */
    Mono<Object> submit(ByteString command);

    /**
     * Completes once this member's state machine holds everything committed before the call (Raft's read
     * index, confirmed with a quorum of voters), so a read after it is linearizable. Works on every member,
     * listeners included, as long as a leader is reachable: else it errors with {@link NotLeaderException}
     * (no leader known) or {@link ReadTimeoutException} (no confirmation in time).
     */
    Mono<Void> readBarrier();
}
