/**
 * The pure Raft core of the metadata log: {@link io.verbatim.metadatalog.raft.RaftNode}, one member as a
 * state machine shaped like etcd raft's {@code RawNode} — no threads, no I/O, no clock, randomness only
 * from a seeded generator. A driver feeds it {@code tick()}, {@code step(message)} and client requests,
 * and carries out each {@link io.verbatim.metadatalog.raft.Ready} (persist and sync, then send, then apply,
 * then {@code advance}). Messages are the Ratis-named protos of {@code raft.proto}. {@code RaftNode} is the
 * core (the roles as step functions, elections, membership, commit); beside it, package-private and each
 * one member's, are {@code Replication}, {@code Delegation}, {@code SnapshotTransfer} and {@code ReadIndex}.
 *
 * <h2>Members</h2>
 * A configuration lists voters ({@code peers}) and listeners (Ratis' non-voting members, Raft's
 * learners). Listeners receive the log exactly as followers do, but never vote (they reject every
 * RequestVote, pre-votes included, even from a candidate whose configuration is stale — Ratis'
 * defensive rule), never campaign however long they hear nothing, and never count toward a commit,
 * check-quorum or a read-index confirmation.
 *
 * <h2>Rules</h2>
 * <ul>
 *   <li><b>Elections.</b> Pre-vote (a candidate first asks, without raising its term, whether it could
 *   win) and check-quorum (a leader that heard from no quorum of voters within an election timeout
 *   steps down; a voter that heard a leader within the timeout ignores campaigns, unless the campaign
 *   follows a leadership transfer). Election timeouts are drawn in [electionTicks, 2·electionTicks).
 *   Only a vote granted (or a leader heard) restarts the timer, not a higher term seen.</li>
 *   <li><b>Replication.</b> Per member, etcd's probe / replicate / snapshot states: one append in flight
 *   while probing, up to {@code maxInflightAppends} while replicating, at most
 *   {@code maxEntriesBytesPerAppend} per append. An INCONSISTENCY reply carries a nextIndex hint: past the
 *   member's end if it is shorter, else the first index of its conflicting term (one round trip per
 *   term, never one per entry), never at or below its commit. Each entry goes to each member once unless
 *   that member rejects an append: heartbeats carry no entries in any state (while probing, a heartbeat's
 *   reply moves the member on as the probe's would, so the probe is not sent again each heartbeat), and a
 *   rejection answering a request sent before the member's current state began (before the probe
 *   restarted or the window opened) is stale and ignored, so one lost append makes the entries from it
 *   on go once more, not once per rejection in flight.</li>
 *   <li><b>Size.</b> A proposal or configuration whose entry would make an append above
 *   {@code RaftConfig.maxMessageBytes} (the transport's largest message), every other field of the append
 *   at its largest, is refused ({@code Proposal.TooLarge}): it could never be sent, by the leader or a
 *   delegate, and nothing would commit behind it.</li>
 *   <li><b>Commit.</b> By the quorum of voters only, and only for an entry of the leader's term (§5.4.2);
 *   a new leader appends a no-op at once. A follower or listener commits at most
 *   {@code min(leaderCommit, previous.index + entries)} (the leader caps it too), and refuses an append
 *   overlapping its committed entries (INCONSISTENCY, nextIndex = commit + 1): committed entries are
 *   never truncated.</li>
 *   <li><b>The progress rule</b> (what lets a leader learn any member's progress, voter or listener, from
 *   its own replies — and what listener delegation relies on, the leader only heartbeating delegated
 *   listeners): a SUCCESS reply in the leader's term to an AppendEntries, heartbeat or not, proves that
 *   the member's log held the leader's log up to {@code previousLog.index + entries} when it replied —
 *   the previous entry matched (log matching) and the entries were appended, and the reply left only
 *   after they were synced. That index is the reply's {@code matchIndex}; the leader takes the maximum
 *   of what it knew and it. A member never reports its own last index, which may hold a divergent
 *   suffix. Heartbeats carry {@code previousLog = nextIndex − 1}, so a heartbeat reply advances the
 *   match of an idle, caught-up member, and an INCONSISTENCY reply to one reveals lost appends within a
 *   heartbeat. An INCONSISTENCY hint at or below the known match is stale and ignored if the reply is older
 *   than the SUCCESS that proved the match; if newer, the member's log diverges right after its match (a
 *   suffix of an older term whose run reaches below it) and the probe restarts at match + 1.</li>
 *   <li><b>Listener delegation</b> (off unless {@code RaftConfig.delegationEnabled}, a switch of each
 *   member's: a leader with it off delegates nothing and sends no assignment, a follower with it off
 *   feeds no listener whatever it is assigned; RATIS-2599 as its review settled it). <i>Assignment</i> is the admin's, in the configuration ({@code delegations}:
 *   listener → follower), validated by {@code setConfiguration} and at start: the listener a listener of
 *   that configuration and delegated once, the follower a voter of it, at most
 *   {@code maxListenersPerFollower} per follower; no automatic selection. <i>The leader</i> tells each
 *   voter which listeners it must feed now (the assignment less what it revoked, for its term; an empty
 *   assignment means none), on every append from a change until that voter answers one that carried it,
 *   then on a heartbeat once an election timeout only; an append without one leaves the follower with the
 *   assignment it last read in this term (none if it read none: a change of term, leader or role clears
 *   it); a listener assigned to the leader
 *   itself is fed directly. It keeps heartbeating every listener itself: to a delegated one it sends no
 *   entries, only heartbeats with previousLog at the listener's known match and the commit capped there
 *   as always, so a listener that hears the leader's commit before the delegate's entries applies nothing
 *   new; the listener's replies come to it directly, and the {@code followerCommit} of a SUCCESS or
 *   INCONSISTENCY reply in its term is a safe match (a listener's log up to its commit is committed, and
 *   committed entries are in every leader's log of that term or later); it never probes a delegated
 *   listener. No relayed progress: reply field 8 stays unused. <i>A delegate</i> keeps, while it follows
 *   the leader of the term of the assignment, an appender (probe / replicate / snapshot, as the leader's)
 *   per assigned listener over its own log, from any index, a snapshot of its own when the listener needs
 *   an entry it compacted; it sends <b>only entries it knows committed</b> (at most its commit index),
 *   stamped fromFollower, its term and the leader's id, the commit capped as usual; so a delegate with a
 *   stale suffix of an older term, or one still following a deposed leader, hands a listener nothing but
 *   committed entries, which are the same in every leader's log. It sends when its commit advances and on
 *   a listener's reply; an append unanswered for an election timeout goes again as a probe. It drops every
 *   appender on any change of term or leader, on campaigning, leading or becoming a listener, and when
 *   the assignment stops naming a listener. <i>A listener</i> takes a fromFollower append or snapshot
 *   — so does a member added as a listener that has not yet received the entry adding it (else a
 *   delegate could never bring it that entry); a voter of its own configuration (or a leader or
 *   candidate) answers NOT_LEADER in its own term, to the sender, and takes neither the message's term nor
 *   the leader it names; an older term is refused (NOT_LEADER);
 *   a newer one is adopted with the leader the message names, never the delegate; the consistency check
 *   and the commit cap are those of any append; the reply goes to the sender. <i>Fallback</i>: the leader
 *   revokes a delegation, replicates to the listener directly at once (a probe from its match + 1)
 *   and tells the delegate at once (a heartbeat with the new assignment; a restoration too),
 *   when the delegate has not answered for an election timeout, lags the leader's commit by more
 *   than {@code followerLagThreshold}, or the listener's match has not advanced for
 *   {@code reassignmentTicks} while the commit is above it; every {@code reassignmentTicks} it restores a
 *   revoked one whose cooldown is over if the delegate is healthy again. The cooldown is
 *   {@code revocationCooldownTicks}, doubled for each revocation of the same delegation in a row (at most
 *   16 times), so a persistent cut between delegate and listener does not cycle every cooldown; a
 *   restored delegation that stays in force for twice {@code reassignmentTicks} and meanwhile brings the
 *   listener an entry the leader had not yet appended when restoring it starts afresh (time alone, in a
 *   quiet spell, proves nothing). An admin's new assignment of a listener starts afresh at once: what the
 *   leader revoked, and its backoff, belonged to the old one. A revocation reaches a delegate being sent a
 *   snapshot too (an empty append at the snapshot's index if its match is compacted away). <i>A listener
 *   that takes itself for a voter</i> refuses its delegate: a voter demoted, or removed and added back as a
 *   listener, until it holds the entry that made it a listener; a listener holding an older term's entry
 *   promoting it (its leader deposed before the promotion reached anyone else). Every append reply says
 *   whether its sender is a voter of its own latest configuration (field 10); the leader delegates a
 *   listener only while its last reply said no and its match reaches the entry that made it a listener
 *   after it was a voter, and feeds it directly otherwise (not a revocation). A new leader starts from the
 *   admin's assignment. Delegation changes who sends, never what a listener may
 *   hold or apply: listeners still never vote or count.</li>
 *   <li><b>Snapshots.</b> {@code compact(index, data)} lets the log drop entries the application's
 *   snapshot covers, all but a tail of {@code logTailEntries} at and before {@code index} (kept in memory,
 *   not by the storage), so a member a little behind is still sent entries; a member that needs a dropped
 *   entry gets that snapshot (with the configuration in
 *   force at its index in the meta) as InstallSnapshot chunks of {@code snapshotChunkBytes}, one chunk in
 *   flight, each reply naming the next offset wanted. A receiver assembles one sender's snapshot at a time
 *   (the leader's or a delegate's, which need not be the same bytes): a chunk at offset 0 starts over, a
 *   later chunk from another sender is answered offset 0, never spliced in.</li>
 * </ul>
 *
 * <h2>Design choices</h2>
 * <p><b>Read index, not leases.</b> A read records the leader's commit index and is answered once a
 * quorum of voters has acknowledged a heartbeat sent after it began (each echoes the read context); a
 * new leader answers only after its no-op commits, since before that it does not know the commit index.
 * Followers and listeners forward reads to the leader and serve them once they have applied the index.
 * A lease (serving from the leader without a round trip) is only as safe as the bound on clock drift
 * and pauses between members: a GC pause or a stepped clock on a deposed leader yields stale reads. The
 * core has no clock by design, and one heartbeat round per batch of reads is cheap for metadata.
 *
 * <p><b>One voter at a time, not joint consensus.</b> Any two majorities of configurations differing by
 * one voter intersect, so each change is safe on its own, it takes effect when appended (no two-phase
 * entry), and the proto reserves Ratis' old-configuration fields. The rules that make it safe: at most
 * one uncommitted configuration entry; a leader changes membership only once it has committed an entry
 * of its own term (Ongaro's fix of the single-server bug); requests changing two voters are refused
 * naming both. Listeners change freely alongside, as they take no part in quorums. A leader not among
 * the voters of the entry it appended leads until that entry commits (not counting itself) and then
 * steps down; a member outside the voters never campaigns.
 *
 * <p><b>Listener ↔ voter changes are supported,</b> each counting as one voter change: promotion is the
 * safe way to add a voter (add it as a listener, let it catch up, then promote it, so the quorum never
 * waits for an empty log), and demotion the way to retire one while it keeps the log. Because a
 * listener rejects votes until it learns it was promoted, a group could wedge if a later change made
 * the quorum need a promoted member that never received its promotion; so a change of voters is refused
 * until every voter that stays has acknowledged the configuration in force, and the leader's first entry
 * of its term (before it, that voter's log may end in an older term's configuration entry no leader keeps,
 * one demoting it, say, and it would reject votes as a listener it no longer is); the refusal names it.
 *
 * <p><b>Bootstrap.</b> The group's first configuration is the configuration at index 0, as if held by a
 * snapshot at (term 0, index 0): every founder passes the same one to {@code start}, nothing is written
 * for it, and the first entry is the first leader's no-op. A member joining later starts with an empty
 * configuration (it never campaigns) and learns its membership from the leader's entries or snapshot.
 */
@NullMarked
package io.verbatim.metadatalog.raft;

import org.jspecify.annotations.NullMarked;
