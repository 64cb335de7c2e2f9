package io.verbatim.metadatalog.transport;

import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;

/** The contract over loopback TCP. */
class NettyRaftTransportContractTest extends RaftTransportContract {
    private static final int BOUND = 256;
    private final NettyGroup group = new NettyGroup(GROUP, "a", "b", "c");

    @Override
    protected RaftTransport start(String member) {
        return group.start(member, b -> b.maxQueued(BOUND, 64L << 20));
    }

    @Override
    protected RaftTransportMetrics metrics(RaftTransport transport) {
        return ((NettyRaftTransport) transport).metrics();
    }

    @Override
    protected void await(String what, BooleanSupplier done, Runnable eachRound) {
        Poll.until(what, done, eachRound);
    }

    @Override
    protected int queueBound() {
        return BOUND;
    }

    @AfterEach
    void closeAll() {
        group.close();
    }
}
