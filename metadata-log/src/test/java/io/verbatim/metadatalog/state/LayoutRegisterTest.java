package io.verbatim.metadatalog.state;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.CompareAndSetLayout;
import io.verbatim.metadatalog.proto.CreateTopic;
import io.verbatim.metadatalog.proto.LayoutCommand;
import io.verbatim.model.Layout;
import io.verbatim.model.LayoutCodec;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

class LayoutRegisterTest {

    private static ByteString create(String topic, Layout initial) {
        return LayoutCommand.newBuilder().setTopic(topic)
                .setCreate(CreateTopic.newBuilder().setInitial(LayoutCodec.toProto(initial))).build().toByteString();
    }

    private static ByteString cas(String topic, long expected, Layout next) {
        return LayoutCommand.newBuilder().setTopic(topic).setCompareAndSet(CompareAndSetLayout.newBuilder()
                .setExpectedEpoch(expected).setNext(LayoutCodec.toProto(next))).build().toByteString();
    }

    private static Layout split(Layout l) {
        Segment widest = l.activeSegments().stream().max(Comparator.comparingInt(s -> s.range().size())).orElseThrow();
        return l.apply(Mutation.split(widest.id()), l.epoch(), 0).layoutOrThrow();
    }

    /** Random commands, valid and not, each against some topic's current or an older epoch. */
    private static List<ByteString> commands(Random r, int n) {
        List<ByteString> out = new ArrayList<>();
        Layout[] latest = new Layout[3];
        for (int i = 0; i < n; i++) {
            int t = r.nextInt(3);
            String topic = "t" + t;
            int kind = r.nextInt(10);
            if (latest[t] == null || kind == 0) {
                Layout initial = Layout.initial(1 + r.nextInt(3), 1 + r.nextInt(4), 0);
                out.add(create(topic, initial));
                if (latest[t] == null) {
                    latest[t] = initial;
                }
            } else if (kind == 1) {
                out.add(ByteString.copyFrom(new byte[] {(byte) r.nextInt(), 0x7f, (byte) r.nextInt()}));
            } else {
                Layout next = split(latest[t]);
                long expected = r.nextInt(4) == 0 ? Math.max(0, latest[t].epoch() - 1) : latest[t].epoch();
                out.add(cas(topic, expected, next));
                if (expected == latest[t].epoch()) {
                    latest[t] = next;
                }
            }
        }
        return out;
    }

    @Test
    void theSameCommandsGiveTheSameOutcomesAndStateOnEveryMember() {
        for (long seed = 0; seed < 200; seed++) {
            List<ByteString> commands = commands(new Random(seed), 40);
            LayoutRegister a = new LayoutRegister();
            LayoutRegister b = new LayoutRegister();
            for (int i = 0; i < commands.size(); i++) {
                assertThat(b.apply(i + 1, commands.get(i))).as("seed %d, entry %d", seed, i + 1)
                        .isEqualTo(a.apply(i + 1, commands.get(i)));
            }
            assertThat(b.snapshot()).as("seed %d", seed).isEqualTo(a.snapshot());
            LayoutRegister restored = new LayoutRegister();
            restored.restore(a.snapshot());
            assertThat(restored.topics()).isEqualTo(a.topics());
            for (String topic : a.topics()) {
                assertThat(restored.get(topic)).isEqualTo(a.get(topic));
            }
        }
    }

    @Test
    void aCommandThatIsNotOneIsAnOutcomeNotAnException() {
        LayoutRegister register = new LayoutRegister();
        assertThat(register.apply(7, ByteString.copyFromUtf8("\u00ff\u00ffgarbage")))
                .isInstanceOfSatisfying(LayoutOutcome.Invalid.class,
                        i -> assertThat(i.reason()).contains("entry 7 is not a layout command"));
        assertThat(register.apply(8, LayoutCommand.newBuilder().setTopic("t").build().toByteString()))
                .isEqualTo(new LayoutOutcome.Invalid("entry 8 names no operation"));
        assertThat(register.apply(9, cas("t", 0, Layout.initial(1, 1, 1))))
                .isEqualTo(new LayoutOutcome.Invalid("topic t does not exist in this store"));
        assertThat(register.topics()).isEmpty();
    }

    @Test
    void aWatchOfATopicNotCreatedYetWaitsForItThenFollowsEveryChange() {
        LayoutRegister register = new LayoutRegister();
        Layout one = Layout.initial(1, 1, 0);
        StepVerifier.create(register.watch("t").take(2))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(10))
                .then(() -> register.apply(1, create("t", one)))
                .expectNext(one)
                .then(() -> register.apply(2, cas("t", 0, split(one))))
                .expectNext(split(one))
                .verifyComplete();
    }

    @Test
    void aRestoredSnapshotIsSeenByWatchers() {
        LayoutRegister leader = new LayoutRegister();
        Layout one = Layout.initial(1, 1, 0);
        leader.apply(1, create("t", one));
        leader.apply(2, cas("t", 0, split(one)));
        LayoutRegister behind = new LayoutRegister();
        behind.apply(1, create("t", one));
        StepVerifier.create(behind.watch("t").take(2))
                .expectNext(one)
                .then(() -> behind.restore(leader.snapshot()))
                .expectNext(split(one))
                .verifyComplete();
    }
}
