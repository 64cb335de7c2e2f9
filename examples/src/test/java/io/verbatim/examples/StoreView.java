package io.verbatim.examples;

import io.verbatim.embedded.MemorySegments;
import io.verbatim.examples.FaultChecker.Rule;
import io.verbatim.examples.FaultChecker.Stored;
import io.verbatim.examples.FaultChecker.Violation;
import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import io.verbatim.pulsar.PulsarStorage;
import io.verbatim.pulsar.WirePositions;
import io.verbatim.testkit.ReplicationChecks.Check;
import io.verbatim.testkit.ReplicationRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.impl.MessageIdImpl;

/** Where the fault suite reads what each cluster stores of its topic, and which segments a split may name. */
interface StoreView extends AutoCloseable {

    /** What every cluster stores, read at one moment (after the heal and the drain). */
    Snapshot read(List<String> clusters) throws Exception;

    /** The segments of {@code cluster} a split may name (some may be refused: sealed meanwhile). */
    List<Long> splitCandidates(String cluster) throws Exception;

    @Override
    void close();

    /** Every cluster's messages in storage order, and what else the storage lets the suite check. */
    record Snapshot(Map<String, List<Stored>> messages, List<Violation> placement) {
    }

    /** The embedded storage: each node's image endpoint (the state format), read over HTTP. */
    final class Images implements StoreView {
        private static final Duration TIMEOUT = Duration.ofSeconds(20);
        private final NodeProcesses nodes;
        private final String topic;

        Images(NodeProcesses nodes, String topic) {
            this.nodes = nodes;
            this.topic = topic;
        }

        @Override
        public Snapshot read(List<String> clusters) throws Exception {
            Map<String, MemorySegments> images = new LinkedHashMap<>();
            Map<String, List<Stored>> messages = new LinkedHashMap<>();
            for (String c : clusters) {
                MemorySegments image = nodes.image(c, c, topic, TIMEOUT);
                images.put(c, image);
                messages.put(c, FaultChecker.messages(image.contents(), UnaryOperator.identity()));
            }
            // The demo's placement and payload checks fit as they are: they need nothing of what was produced.
            ReplicationRecorder recorder = ReplicationRecorder.of(images, true);
            List<Check> checks = new ArrayList<>(recorder.placement());
            checks.add(recorder.verbatimPayloads());
            List<Violation> placement = new ArrayList<>();
            for (Check check : checks) {
                if (!check.passed()) {
                    placement.add(new Violation(Rule.PLACEMENT, check.name() + ": " + check.detail(), check.name() + ": "
                            + check.detail()));
                }
            }
            return new Snapshot(messages, placement);
        }

        @Override
        public List<Long> splitCandidates(String cluster) throws Exception {
            return nodes.image(cluster, cluster, topic, Duration.ofSeconds(3)).layout().activeSegments().stream()
                    .map(Segment::id).toList();
        }

        @Override
        public void close() {
        }
    }

    /**
     * Pulsar: each cluster's namespace on the one broker, read from this JVM. Every segment topic of the
     * scalable topic ({@code <name>-<start>-<end>-<id>}) is read raw from its first entry to its last, through a
     * subscription of its own that is deleted after.
     */
    final class OnPulsar implements StoreView {
        private static final Duration WAIT = Duration.ofSeconds(60);
        private static final AtomicInteger READS = new AtomicInteger();
        private final String topic;
        private final String localName;
        private final Map<String, String> namespaces;
        private final Map<String, PulsarStorage> storages = new LinkedHashMap<>();
        private final PulsarAdmin admin;

        /** @param namespaces each cluster's namespace, {@code tenant/ns} */
        OnPulsar(String serviceUrl, String adminUrl, String topic, Map<String, String> namespaces) throws Exception {
            this.topic = topic;
            this.localName = topic.substring(topic.lastIndexOf('/') + 1);
            this.namespaces = Map.copyOf(namespaces);
            namespaces.forEach((c, ns) -> storages.put(c, PulsarStorage.connect(PulsarStorage.Settings.of(serviceUrl,
                    adminUrl, ns))));
            this.admin = PulsarAdmin.builder().serviceHttpUrl(adminUrl).requestTimeout(30, TimeUnit.SECONDS).build();
        }

        @Override
        public Snapshot read(List<String> clusters) throws Exception {
            Map<String, List<Stored>> messages = new LinkedHashMap<>();
            for (String c : clusters) {
                Map<Long, List<StoredEntry>> contents = new TreeMap<>();
                for (Segment s : segments(c)) {
                    contents.put(s.id(), readAll(c, s));
                }
                messages.put(c, FaultChecker.messages(contents, WirePositions::decode));
            }
            return new Snapshot(messages, List.of());
        }

        @Override
        /** The active segments: a sealed one's topic is terminated (and counting it would stop the splits early). */
        public List<Long> splitCandidates(String cluster) throws Exception {
            PulsarStorage storage = storages.get(cluster);
            List<Long> active = new ArrayList<>();
            for (Segment s : segments(cluster)) {
                var stats = admin.topics().getInternalStatsAsync(storage.segmentTopic(topic, s)).get(30,
                        TimeUnit.SECONDS);
                if (!"Terminated".equals(stats.state)) {
                    active.add(s.id());
                }
            }
            return active;
        }

        /** Every segment topic of the scalable topic in {@code cluster}'s namespace. */
        private List<Segment> segments(String cluster) throws Exception {
            Pattern name = Pattern.compile("persistent://" + Pattern.quote(namespaces.get(cluster)) + "/"
                    + Pattern.quote(localName) + "-([0-9a-f]{4})-([0-9a-f]{4})-(\\d+)");
            List<Segment> out = new ArrayList<>();
            for (String t : admin.topics().getListAsync(namespaces.get(cluster)).get(30, TimeUnit.SECONDS)) {
                Matcher m = name.matcher(t);
                if (m.matches()) {
                    out.add(Segment.active(Long.parseLong(m.group(3)), HashRange.of(Integer.parseInt(m.group(1), 16),
                            Integer.parseInt(m.group(2), 16)), List.of(), 0, 0, Buckets.ONE));
                }
            }
            return out;
        }

        private List<StoredEntry> readAll(String cluster, Segment segment) throws Exception {
            PulsarStorage storage = storages.get(cluster);
            String name = storage.segmentTopic(topic, segment);
            MessageId last = admin.topics().getLastMessageIdAsync(name).get(30, TimeUnit.SECONDS);
            MessageIdImpl end = (MessageIdImpl) last;
            if (end.getEntryId() < 0) {
                return List.of();
            }
            SourcePosition lastPosition = SourcePosition.of(end.getLedgerId(), end.getEntryId());
            String subscription = "fault-check-" + READS.incrementAndGet();
            ReplicationCursor cursor = storage.log(topic, segment).cursor(subscription, StartAt.EARLIEST).block(WAIT);
            try {
                return cursor.read().takeUntil(e -> e.position().compareTo(lastPosition) >= 0).collectList().block(WAIT);
            } finally {
                admin.topics().deleteSubscriptionAsync(name, subscription, true).get(30, TimeUnit.SECONDS);
            }
        }

        @Override
        public void close() {
            admin.close();
            storages.values().forEach(PulsarStorage::close);
        }
    }
}
