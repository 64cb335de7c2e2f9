package io.verbatim.runtime.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The brokers' report to the controller leader: its bodies, its JSON, what it refuses. */
class BrokerReportTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aFleetOfTopicsReportsInBodiesOfBoundedSize() {
        Map<String, BrokerReport.Topic> topics = new LinkedHashMap<>();
        for (int i = 0; i < 450; i++) {
            topics.put("t" + i, new BrokerReport.Topic(Map.of(0L, new long[] {1, 2, 3, 4}), 1, List.of()));
        }
        List<BrokerReport> chunks = new BrokerReport(topics).chunks();
        assertThat(chunks).extracting(c -> c.topics().size()).containsExactly(200, 200, 50);
        assertThat(chunks.stream().flatMap(c -> c.topics().keySet().stream())).containsExactlyInAnyOrderElementsOf(
                topics.keySet());
        assertThat(new BrokerReport(Map.of()).chunks()).singleElement().satisfies(c -> assertThat(c.topics()).isEmpty());
    }

    @Test
    void itsJsonReadsBackAndBadValuesAreRefusedNamingThem() throws Exception {
        BrokerReport r = new BrokerReport(Map.of("t", new BrokerReport.Topic(Map.of(7L, new long[] {5, 500, 1, 10}), 2,
                List.of(3L))));
        BrokerReport back = JSON.readValue(JSON.writeValueAsBytes(r), BrokerReport.class);
        assertThat(back.topics().get("t").load().get(7L)).containsExactly(5, 500, 1, 10);
        assertThat(back.topics().get("t").prunable()).containsExactly(3L);
        assertThatThrownBy(() -> new BrokerReport.Topic(Map.of(1L, new long[] {1, 2}), 0, List.of()))
                .hasMessageContaining("[msgIn, bytesIn, msgOut, bytesOut]");
        assertThatThrownBy(() -> new BrokerReport.Topic(Map.of(), -1, List.of())).hasMessageContaining("consumers is -1");
        BrokerReport.Answer a = JSON.readValue("{\"verdicts\":{\"b\":true},\"leader\":\"c2\",\"term\":4}",
                BrokerReport.Answer.class);
        assertThat(a.verdicts()).containsEntry("b", true);
        assertThat(a.term()).isEqualTo(4);
    }
}
