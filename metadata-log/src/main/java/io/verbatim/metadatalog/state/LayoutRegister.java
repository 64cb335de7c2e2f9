package io.verbatim.metadatalog.state;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.verbatim.layoutstore.EpochRule;
import io.verbatim.metadatalog.proto.LayoutCommand;
import io.verbatim.metadatalog.proto.LayoutRegisterSnapshot;
import io.verbatim.metadatalog.proto.TopicLayout;
import io.verbatim.metadatalog.server.StateMachine;
import io.verbatim.model.Layout;
import io.verbatim.model.LayoutCodec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentSkipListMap;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * The metadata log's state machine: per topic a layout, moved only by compare-and-set on its epoch. Every
 * member applies the same commands to one of these, so each (listeners included) can serve the latest
 * layout and a watch of it from its own replica. Applied from the member's driver thread; read from any.
 */
public final class LayoutRegister implements StateMachine {
    private static final Sinks.EmitFailureHandler RETRY = Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1));

    private final Map<String, Topic> topics = new ConcurrentSkipListMap<>();
    private final OwnershipRegister ownership = new OwnershipRegister();

    private static final class Topic {
        volatile Optional<Layout> layout = Optional.empty();
        final Sinks.Many<Layout> changes = Sinks.many().replay().latest();
    }

    /**
     * Applies one command: its outcome, a {@link LayoutOutcome} for a layout's or an {@link OwnershipOutcome}
     * for an ownership or member change, is the same on every member.
     */
    @Override
    public Object apply(long index, ByteString command) {
        LayoutCommand parsed;
        try {
            parsed = LayoutCommand.parseFrom(command);
        } catch (InvalidProtocolBufferException e) {
            return new LayoutOutcome.Invalid("entry " + index + " is not a layout command: " + e.getMessage());
        }
        try {
            return switch (parsed.getOpCase()) {
                case CREATE -> create(parsed.getTopic(), LayoutCodec.fromProto(parsed.getCreate().getInitial()));
                case COMPARE_AND_SET -> compareAndSet(index, parsed.getTopic(),
                        parsed.getCompareAndSet().getExpectedEpoch(), LayoutCodec.fromProto(parsed.getCompareAndSet().getNext()));
                case OWNERSHIP -> ownership.apply(index, parsed.getOwnership(), this::get);
                case MEMBER -> ownership.member(index, parsed.getMember());
                case OP_NOT_SET -> new LayoutOutcome.Invalid("entry " + index + " names no operation");
            };
        } catch (IllegalArgumentException e) {
            return new LayoutOutcome.Invalid("the layout of " + parsed.getTopic() + " in entry " + index
                    + " is not valid: " + e.getMessage());
        }
    }

    private LayoutOutcome create(String topic, Layout initial) {
        Topic t = topics.computeIfAbsent(topic, k -> new Topic());
        EpochRule.Verdict verdict = EpochRule.create(topic, epoch(t));
        if (!(verdict instanceof EpochRule.Verdict.Allowed)) {
            return refused(verdict);
        }
        store(t, initial);
        return new LayoutOutcome.Stored(initial);
    }

    private LayoutOutcome compareAndSet(long index, String topic, long expectedEpoch, Layout next) {
        Topic t = topics.get(topic);
        EpochRule.Verdict verdict = EpochRule.compareAndSet(topic, t == null ? OptionalLong.empty() : epoch(t),
                expectedEpoch, next.epoch());
        if (t == null || !(verdict instanceof EpochRule.Verdict.Allowed)) {
            return refused(verdict);
        }
        store(t, next);
        ownership.layoutChanged(index, topic, next);
        return new LayoutOutcome.Stored(next);
    }

    private static OptionalLong epoch(Topic t) {
        Optional<Layout> held = t.layout;
        return held.isPresent() ? OptionalLong.of(held.get().epoch()) : OptionalLong.empty();
    }

    /** The outcome of a command {@link EpochRule} refused. */
    private static LayoutOutcome refused(EpochRule.Verdict verdict) {
        if (verdict instanceof EpochRule.Verdict.Stale s) {
            return new LayoutOutcome.Stale(s.expectedEpoch(), s.actualEpoch());
        }
        return new LayoutOutcome.Invalid(((EpochRule.Verdict.Invalid) verdict).reason());
    }

    private static void store(Topic t, Layout layout) {
        t.layout = Optional.of(layout);
        t.changes.emitNext(layout, RETRY);
    }

    /** The topic's layout as this member has applied it. */
    public Optional<Layout> get(String topic) {
        Topic t = topics.get(topic);
        return t == null ? Optional.empty() : t.layout;
    }

    /** The topics this member holds, sorted. */
    public List<String> topics() {
        return topics.entrySet().stream().filter(e -> e.getValue().layout.isPresent()).map(Map.Entry::getKey).toList();
    }

    /** The latest layout, then every newer one; a topic not created yet is waited for. */
    public Flux<Layout> watch(String topic) {
        return topics.computeIfAbsent(topic, k -> new Topic()).changes.asFlux();
    }

    /** The segments' ownership and the broker members as this member has applied them. */
    public OwnershipTable ownership() {
        return ownership.table();
    }

    /** The current ownership table, then each after a change. */
    public Flux<OwnershipTable> watchOwnership() {
        return ownership.watch();
    }

    @Override
    public ByteString snapshot() {
        LayoutRegisterSnapshot.Builder b = LayoutRegisterSnapshot.newBuilder();
        topics.forEach((name, t) -> t.layout.ifPresent(l -> b.addTopics(
                TopicLayout.newBuilder().setTopic(name).setLayout(LayoutCodec.toProto(l)))));
        b.addAllOwners(ownership.ownersToProto()).addAllMembers(ownership.membersToProto())
                .setOwnershipEpoch(ownership.table().epoch());
        return b.build().toByteString();
    }

    /**
     * Takes a snapshot's layouts; watchers see each topic whose layout it changes. A topic the snapshot
     * does not hold keeps what it had (the register never deletes, and a snapshot is never older than what
     * it replaces). The ownership table is the snapshot's, whole.
     */
    @Override
    public void restore(ByteString snapshot) {
        LayoutRegisterSnapshot parsed;
        try {
            parsed = LayoutRegisterSnapshot.parseFrom(snapshot);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("the layout register's snapshot is unreadable: " + e.getMessage(), e);
        }
        for (TopicLayout tl : parsed.getTopicsList()) {
            Layout layout = LayoutCodec.fromProto(tl.getLayout());
            Topic t = topics.computeIfAbsent(tl.getTopic(), k -> new Topic());
            if (!t.layout.equals(Optional.of(layout))) {
                store(t, layout);
            }
        }
        try {
            ownership.restore(parsed.getOwnershipEpoch(), parsed.getOwnersList(), parsed.getMembersList());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("the layout register's snapshot has unreadable ownership: "
                    + e.getMessage(), e);
        }
    }
}
