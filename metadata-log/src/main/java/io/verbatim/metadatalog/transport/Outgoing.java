package io.verbatim.metadatalog.transport;

import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import org.jspecify.annotations.Nullable;

/** What a sender checks before a message leaves: it has a body, it is its own, and of its group. */
final class Outgoing {
    private Outgoing() {
    }

    /** Why {@code message} may not be sent by {@code member} of {@code group}, or {@code null}. */
    static @Nullable Drop check(RaftMessageProto message, String member, String group) {
        if (message.getBodyCase() == RaftMessageProto.BodyCase.BODY_NOT_SET) {
            return Drop.MALFORMED;
        }
        if (!RaftMessages.from(message).equals(member)) {
            return Drop.SPOOFED_SENDER;
        }
        if (!RaftMessages.group(message).equals(group)) {
            return Drop.WRONG_GROUP;
        }
        return null;
    }
}
