package io.verbatim.metadatalog.raft;

import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.TermIndexProto;
import java.util.stream.Collectors;

/** Renders a message as one line of a golden transcript. */
final class Transcript {
    private Transcript() {
    }

    static String from(RaftMessageProto m) {
        return Messages.from(m);
    }

    static String to(RaftMessageProto m) {
        return switch (m.getBodyCase()) {
            case APPENDENTRIES -> m.getAppendEntries().getServerRequest().getReplyId();
            case REQUESTVOTE -> m.getRequestVote().getServerRequest().getReplyId();
            case INSTALLSNAPSHOT -> m.getInstallSnapshot().getServerRequest().getReplyId();
            case STARTLEADERELECTION -> m.getStartLeaderElection().getServerRequest().getReplyId();
            case READINDEX -> m.getReadIndex().getServerRequest().getReplyId();
            case APPENDENTRIESREPLY -> m.getAppendEntriesReply().getServerReply().getRequestorId();
            case REQUESTVOTEREPLY -> m.getRequestVoteReply().getServerReply().getRequestorId();
            case INSTALLSNAPSHOTREPLY -> m.getInstallSnapshotReply().getServerReply().getRequestorId();
            case READINDEXREPLY -> m.getReadIndexReply().getServerReply().getRequestorId();
            case BODY_NOT_SET -> "";
        };
    }

    static String line(RaftMessageProto m) {
        String head = from(m) + " > " + to(m) + " ";
        return head + switch (m.getBodyCase()) {
            case APPENDENTRIES -> {
                var a = m.getAppendEntries();
                yield "AppendEntries term=" + a.getLeaderTerm() + " prev=" + ti(a.getPreviousLog()) + " entries="
                        + a.getEntriesList().stream().map(Transcript::entry).collect(Collectors.joining(",", "[", "]"))
                        + " leaderCommit=" + a.getLeaderCommit() + (a.getReadContext() > 0 ? " readContext=" + a.getReadContext() : "");
            }
            case APPENDENTRIESREPLY -> {
                var r = m.getAppendEntriesReply();
                yield "AppendEntriesReply term=" + r.getTerm() + " " + r.getResult() + " matchIndex=" + r.getMatchIndex()
                        + " nextIndex=" + r.getNextIndex() + " followerCommit=" + r.getFollowerCommit()
                        + (r.getIsHeartbeat() ? " heartbeat" : "") + (r.getReadContext() > 0 ? " readContext=" + r.getReadContext() : "");
            }
            case REQUESTVOTE -> {
                var v = m.getRequestVote();
                yield (v.getPreVote() ? "PreVote" : "RequestVote") + " term=" + v.getCandidateTerm() + " last="
                        + ti(v.getCandidateLastEntry()) + (v.getLeadershipTransfer() ? " transfer" : "");
            }
            case REQUESTVOTEREPLY -> {
                var r = m.getRequestVoteReply();
                yield (r.getPreVote() ? "PreVoteReply" : "RequestVoteReply") + " term=" + r.getTerm()
                        + (r.getServerReply().getSuccess() ? " granted" : " rejected");
            }
            case INSTALLSNAPSHOT -> {
                var s = m.getInstallSnapshot();
                yield "InstallSnapshot term=" + s.getLeaderTerm() + " last=" + ti(s.getSnapshot().getLastIncluded())
                        + " offset=" + s.getChunk().getOffset() + " bytes=" + s.getChunk().getData().size()
                        + " of " + s.getTotalSize() + (s.getChunk().getDone() ? " done" : "");
            }
            case INSTALLSNAPSHOTREPLY -> {
                var r = m.getInstallSnapshotReply();
                yield "InstallSnapshotReply term=" + r.getTerm() + " " + r.getResult() + " nextOffset=" + r.getNextOffset();
            }
            case STARTLEADERELECTION -> "StartLeaderElection term=" + m.getStartLeaderElection().getLeaderTerm()
                    + " last=" + ti(m.getStartLeaderElection().getLeaderLastEntry());
            case READINDEX -> "ReadIndex request=" + m.getReadIndex().getRequestId();
            case READINDEXREPLY -> "ReadIndexReply request=" + m.getReadIndexReply().getRequestId() + " readIndex="
                    + m.getReadIndexReply().getReadIndex() + (m.getReadIndexReply().getServerReply().getSuccess() ? "" : " refused");
            case BODY_NOT_SET -> "?";
        };
    }

    private static String ti(TermIndexProto t) {
        return "(" + t.getTerm() + "," + t.getIndex() + ")";
    }

    private static String entry(LogEntryProto e) {
        String body = e.hasStateMachineLogEntry() ? " " + e.getStateMachineLogEntry().getLogData().toStringUtf8()
                : e.hasConfigurationEntry() ? " conf" : " noop";
        return "(" + e.getTerm() + "," + e.getIndex() + body + ")";
    }
}
