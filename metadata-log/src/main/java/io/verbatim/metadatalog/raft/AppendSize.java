package io.verbatim.metadatalog.raft;

import io.verbatim.metadatalog.proto.AppendEntriesRequestProto;
import io.verbatim.metadatalog.proto.ListenerAssignmentProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerProto;
import io.verbatim.metadatalog.proto.TermIndexProto;

/**
 * The largest append that can carry one entry: the entry alone, with every other field of the message at
 * its largest — the longest member ids of the configuration as sender, addressee and leader, the group,
 * every number at a varint's ten bytes, and an assignment naming every listener. An entry whose largest
 * append fits in the transport's largest message can always be sent, by the leader or by a delegate.
 */
final class AppendSize {
    /** A uint64 at its widest on the wire (ten bytes). */
    private static final long WIDEST = -1L;

    private AppendSize() {
    }

    /** The bytes of the largest append of {@code entry} alone, in group {@code group} under {@code membership}. */
    static long of(LogEntryProto entry, String group, Membership membership, String self) {
        String longest = self;
        for (String m : membership.members()) {
            if (m.length() > longest.length()) {
                longest = m;
            }
        }
        ListenerAssignmentProto.Builder assignment = ListenerAssignmentProto.newBuilder().setLeaderTerm(WIDEST);
        for (RaftPeerProto l : membership.proto().getListenersList()) {
            assignment.addAssignedListeners(l);
        }
        AppendEntriesRequestProto append = AppendEntriesRequestProto.newBuilder()
                .setServerRequest(Messages.request(longest, longest, group, WIDEST))
                .setLeaderTerm(WIDEST).setLeaderCommit(WIDEST).setReadContext(WIDEST)
                .setPreviousLog(TermIndexProto.newBuilder().setTerm(WIDEST).setIndex(WIDEST))
                .addEntries(entry).setListenerAssignment(assignment).setFromFollower(true).setLeaderId(longest)
                .build();
        return RaftMessageProto.newBuilder().setAppendEntries(append).build().getSerializedSize();
    }
}
