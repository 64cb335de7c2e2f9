package io.verbatim.metadatalog.raft;

import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftRpcReplyProto;
import io.verbatim.metadatalog.proto.RaftRpcRequestProto;

/** Headers and the term a message carries. */
final class Messages {
    private Messages() {
    }

    static RaftRpcRequestProto request(String from, String to, String group, long callId) {
        return RaftRpcRequestProto.newBuilder().setRequestorId(from).setReplyId(to).setRaftGroupId(group)
                .setCallId(callId).build();
    }

    /** A reply's header: Ratis keeps the request's requestor (the addressee) and names the replier. */
    static RaftRpcReplyProto reply(RaftRpcRequestProto request, boolean success) {
        return RaftRpcReplyProto.newBuilder().setRequestorId(request.getRequestorId())
                .setReplyId(request.getReplyId()).setRaftGroupId(request.getRaftGroupId())
                .setCallId(request.getCallId()).setSuccess(success).build();
    }

    /** The term a message speaks for; 0 for the read-index messages, which carry no term to obey. */
    static long term(RaftMessageProto m) {
        return switch (m.getBodyCase()) {
            case APPENDENTRIES -> m.getAppendEntries().getLeaderTerm();
            case APPENDENTRIESREPLY -> m.getAppendEntriesReply().getTerm();
            case REQUESTVOTE -> m.getRequestVote().getCandidateTerm();
            case REQUESTVOTEREPLY -> m.getRequestVoteReply().getTerm();
            case INSTALLSNAPSHOT -> m.getInstallSnapshot().getLeaderTerm();
            case INSTALLSNAPSHOTREPLY -> m.getInstallSnapshotReply().getTerm();
            case STARTLEADERELECTION -> m.getStartLeaderElection().getLeaderTerm();
            default -> 0;
        };
    }

    static String from(RaftMessageProto m) {
        return switch (m.getBodyCase()) {
            case APPENDENTRIES -> m.getAppendEntries().getServerRequest().getRequestorId();
            case REQUESTVOTE -> m.getRequestVote().getServerRequest().getRequestorId();
            case INSTALLSNAPSHOT -> m.getInstallSnapshot().getServerRequest().getRequestorId();
            case STARTLEADERELECTION -> m.getStartLeaderElection().getServerRequest().getRequestorId();
            case READINDEX -> m.getReadIndex().getServerRequest().getRequestorId();
            case APPENDENTRIESREPLY -> m.getAppendEntriesReply().getServerReply().getReplyId();
            case REQUESTVOTEREPLY -> m.getRequestVoteReply().getServerReply().getReplyId();
            case INSTALLSNAPSHOTREPLY -> m.getInstallSnapshotReply().getServerReply().getReplyId();
            case READINDEXREPLY -> m.getReadIndexReply().getServerReply().getReplyId();
            case BODY_NOT_SET -> "";
        };
    }

    static String group(RaftMessageProto m) {
        return switch (m.getBodyCase()) {
            case APPENDENTRIES -> m.getAppendEntries().getServerRequest().getRaftGroupId();
            case REQUESTVOTE -> m.getRequestVote().getServerRequest().getRaftGroupId();
            case INSTALLSNAPSHOT -> m.getInstallSnapshot().getServerRequest().getRaftGroupId();
            case STARTLEADERELECTION -> m.getStartLeaderElection().getServerRequest().getRaftGroupId();
            case READINDEX -> m.getReadIndex().getServerRequest().getRaftGroupId();
            case APPENDENTRIESREPLY -> m.getAppendEntriesReply().getServerReply().getRaftGroupId();
            case REQUESTVOTEREPLY -> m.getRequestVoteReply().getServerReply().getRaftGroupId();
            case INSTALLSNAPSHOTREPLY -> m.getInstallSnapshotReply().getServerReply().getRaftGroupId();
            case READINDEXREPLY -> m.getReadIndexReply().getServerReply().getRaftGroupId();
            case BODY_NOT_SET -> "";
        };
    }
}
