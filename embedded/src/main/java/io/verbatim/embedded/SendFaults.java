package io.verbatim.embedded;

import io.verbatim.model.entry.SourcePosition;
import java.time.Duration;
import java.util.Random;

/** Decides the fault of each send, in the order sends are made. */
@FunctionalInterface
public interface SendFaults {
    SendFaults NONE = (segmentId, producerName, position) -> SendFault.NONE;

    SendFault onSend(long segmentId, String producerName, SourcePosition position);

    /** Every send delayed by a round trip of {@code rtt}. */
    static SendFaults roundTrip(Duration rtt) {
        SendFault delay = new SendFault.Delay(rtt);
        return (segmentId, producerName, position) -> delay;
    }

    /**
     * Random faults from a seeded generator: each send fails with probability {@code failureRate}
     * (lost request, lost receipt, hang or rejection, equally likely) and is otherwise delayed by up to
     * {@code maxDelay}.
     */
    static SendFaults seeded(long seed, double failureRate, Duration maxDelay) {
        Random random = new Random(seed);
        return (segmentId, producerName, position) -> {
            synchronized (random) {
                if (random.nextDouble() < failureRate) {
                    switch (random.nextInt(4)) {
                        case 0:
                            return new SendFault.LostRequest();
                        case 1:
                            return new SendFault.LostReceipt();
                        case 2:
                            return new SendFault.Hang();
                        default:
                            return new SendFault.Rejected(Duration.ZERO);
                    }
                }
                long nanos = maxDelay.toNanos();
                return nanos == 0 ? SendFault.NONE : new SendFault.Delay(Duration.ofNanos((long) (random.nextDouble()
                        * nanos)));
            }
        };
    }
}
