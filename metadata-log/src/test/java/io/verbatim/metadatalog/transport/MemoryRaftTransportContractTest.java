package io.verbatim.metadatalog.transport;

import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The contract on a {@link MemoryNetwork} in virtual time. */
class MemoryRaftTransportContractTest extends RaftTransportContract {
    private static final int BOUND = 64;
    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    private final MemoryNetwork network = new MemoryNetwork(GROUP, time, new SplittableRandom(7), BOUND, 4096);
    private final List<RaftTransport> started = new ArrayList<>();

    @Override
    protected RaftTransport start(String member) {
        RaftTransport t = network.join(member);
        started.add(t);
        return t;
    }

    @Override
    protected RaftTransportMetrics metrics(RaftTransport transport) {
        return ((MemoryRaftTransport) transport).metrics();
    }

    @Override
    protected void await(String what, BooleanSupplier done, Runnable eachRound) {
        for (int round = 0; round < 1000; round++) {
            eachRound.run();
            time.advanceTimeBy(Duration.ofMillis(10));
            if (done.getAsBoolean()) {
                return;
            }
        }
        fail("not within 10 virtual seconds: " + what);
    }

    @Override
    protected int queueBound() {
        return BOUND;
    }

    @AfterEach
    void closeAll() {
        started.forEach(RaftTransport::close);
        time.dispose();
    }
}
