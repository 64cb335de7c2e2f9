package io.verbatim.metadatalog.transport;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.AppendEntriesRequestProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftRpcRequestProto;
import io.verbatim.metadatalog.proto.StateMachineLogEntryProto;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;
import reactor.core.Disposable;

/** Messages for the transport tests, and what a member received. */
final class Messages {
    private Messages() {
    }

    /** An AppendEntries from {@code from} to {@code to} of {@code group}, {@code callId} its sequence number. */
    static RaftMessageProto append(String from, String to, String group, long callId, int payloadBytes) {
        AppendEntriesRequestProto.Builder b = AppendEntriesRequestProto.newBuilder()
                .setServerRequest(RaftRpcRequestProto.newBuilder().setRequestorId(from).setReplyId(to)
                        .setRaftGroupId(group).setCallId(callId))
                .setLeaderTerm(1);
        if (payloadBytes > 0) {
            b.addEntries(LogEntryProto.newBuilder().setTerm(1).setIndex(callId + 1).setStateMachineLogEntry(
                    StateMachineLogEntryProto.newBuilder().setLogData(ByteString.copyFrom(new byte[payloadBytes]))));
        }
        return RaftMessageProto.newBuilder().setAppendEntries(b).build();
    }

    static RaftMessageProto append(String from, String to, String group, long callId) {
        return append(from, to, group, callId, 0);
    }

    static long callId(RaftMessageProto m) {
        return m.getAppendEntries().getServerRequest().getCallId();
    }

    /** What one member's {@code inbound()} signalled, collected as it arrives. */
    static final class Inbox implements AutoCloseable {
        final Queue<RaftMessageProto> messages = new ConcurrentLinkedQueue<>();
        private final Disposable subscription;

        Inbox(RaftTransport transport) {
            this.subscription = transport.inbound().subscribe(messages::add);
        }

        int size() {
            return messages.size();
        }

        List<Long> callIdsFrom(String from) {
            return messages.stream().filter(m -> RaftMessages.from(m).equals(from)).map(Messages::callId)
                    .collect(Collectors.toList());
        }

        @Override
        public void close() {
            subscription.dispose();
        }
    }
}
