package io.verbatim.metadatalog.transport;

import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftRpcReplyProto;
import io.verbatim.metadatalog.proto.RaftRpcRequestProto;

/** Who sent a message and to whom, read from its request or reply header, whatever its body. */
public final class RaftMessages {
    private RaftMessages() {
    }

    /** The sender's member id. */
    public static String from(RaftMessageProto message) {
        return switch (message.getBodyCase()) {
            case APPENDENTRIES -> message.getAppendEntries().getServerRequest().getRequestorId();
            case REQUESTVOTE -> message.getRequestVote().getServerRequest().getRequestorId();
            case INSTALLSNAPSHOT -> message.getInstallSnapshot().getServerRequest().getRequestorId();
            case STARTLEADERELECTION -> message.getStartLeaderElection().getServerRequest().getRequestorId();
            case READINDEX -> message.getReadIndex().getServerRequest().getRequestorId();
            default -> reply(message).getReplyId();
        };
    }

    /** The addressee's member id. */
    public static String to(RaftMessageProto message) {
        return switch (message.getBodyCase()) {
            case APPENDENTRIES, REQUESTVOTE, INSTALLSNAPSHOT, STARTLEADERELECTION, READINDEX -> request(message).getReplyId();
            default -> reply(message).getRequestorId();
        };
    }

    /** The Raft group the message belongs to. */
    public static String group(RaftMessageProto message) {
        return switch (message.getBodyCase()) {
            case APPENDENTRIES, REQUESTVOTE, INSTALLSNAPSHOT, STARTLEADERELECTION, READINDEX -> request(message).getRaftGroupId();
            default -> reply(message).getRaftGroupId();
        };
    }

    /**
     * Whether a listener may send {@code message}: its replies to appends and snapshot chunks, a vote
     * refused, and a read forwarded to the leader. Never what only a voter sends: a vote asked or granted, an
     * append or a snapshot chunk (a delegate that feeds listeners is a voter), a leadership hand-over, or a
     * read's answer (the leader's).
     */
    static boolean listenerMaySend(RaftMessageProto message) {
        return switch (message.getBodyCase()) {
            case APPENDENTRIESREPLY, INSTALLSNAPSHOTREPLY, READINDEX -> true;
            case REQUESTVOTEREPLY -> !message.getRequestVoteReply().getServerReply().getSuccess();
            default -> false;
        };
    }

    private static RaftRpcRequestProto request(RaftMessageProto message) {
        return switch (message.getBodyCase()) {
            case APPENDENTRIES -> message.getAppendEntries().getServerRequest();
            case REQUESTVOTE -> message.getRequestVote().getServerRequest();
            case INSTALLSNAPSHOT -> message.getInstallSnapshot().getServerRequest();
            case STARTLEADERELECTION -> message.getStartLeaderElection().getServerRequest();
            case READINDEX -> message.getReadIndex().getServerRequest();
            default -> throw new IllegalArgumentException("not a request: " + message.getBodyCase());
        };
    }

    private static RaftRpcReplyProto reply(RaftMessageProto message) {
        return switch (message.getBodyCase()) {
            case APPENDENTRIESREPLY -> message.getAppendEntriesReply().getServerReply();
            case REQUESTVOTEREPLY -> message.getRequestVoteReply().getServerReply();
            case INSTALLSNAPSHOTREPLY -> message.getInstallSnapshotReply().getServerReply();
            case READINDEXREPLY -> message.getReadIndexReply().getServerReply();
            default -> throw new IllegalArgumentException("a message with no body");
        };
    }
}
