package io.verbatim.metadatalog.state;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.server.NotLeaderException;
import io.verbatim.metadatalog.server.ReplicatedLog;
import io.verbatim.model.Layout;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The leader-routing store of a member alone in its process: what it reads while it leads and while it does not. */
class LeaderLayoutStoreOnOneMemberTest {
    private final LayoutRegister register = new LayoutRegister();
    private final AtomicBoolean leads = new AtomicBoolean(true);
    private final AtomicInteger barriers = new AtomicInteger();
    private final AtomicInteger submits = new AtomicInteger();
    private final LeaderLayoutStore store = LeaderLayoutStore.ofMember("c1",
            new RaftLayoutStore(new Member(new DirectLog(register)), register), leads::get);

    /** {@link DirectLog} that refuses commands and reads while it does not lead. */
    private final class Member implements ReplicatedLog {
        private final DirectLog log;

        Member(DirectLog log) {
            this.log = log;
        }

        @Override
        public Mono<Object> submit(ByteString command) {
            submits.incrementAndGet();
            return leads.get() ? log.submit(command) : Mono.error(new NotLeaderException("c1", Optional.of("c2")));
        }

        @Override
        public Mono<Void> readBarrier() {
            barriers.incrementAndGet();
            return leads.get() ? log.readBarrier() : Mono.error(new NotLeaderException("c1", Optional.empty()));
        }
    }

    @Test
    void whileItLeadsReadsAskTheLog() {
        Layout initial = Layout.initial(2, 100, 0);
        StepVerifier.create(store.create("t", initial)).expectNextCount(1).verifyComplete();
        StepVerifier.create(store.get("t")).expectNextCount(1).verifyComplete();
        StepVerifier.create(store.topics()).expectNext("t").verifyComplete();
        assertThat(barriers).hasValue(2);
    }

    @Test
    void whileItDoesNotLeadReadsAreItsOwnAndWritesAreRefusedOnce() {
        Layout initial = Layout.initial(2, 100, 0);
        store.create("t", initial).block();
        leads.set(false);
        int before = barriers.get();
        StepVerifier.create(store.get("t")).expectNextCount(1).verifyComplete();
        StepVerifier.create(store.topics()).expectNext("t").verifyComplete();
        assertThat(barriers).as("no read asks the log").hasValue(before);
        int submitted = submits.get();
        StepVerifier.create(store.create("u", initial)).verifyErrorSatisfies(e -> assertThat(e)
                .isInstanceOf(NotLeaderException.class).hasMessageContaining("c2"));
        assertThat(submits).as("not retried").hasValue(submitted + 1);
    }
}
