package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.exchange.proto.TopicResult;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PeerBookTest {
    /**
     * The topics a peer did not take are sent again in one order in every run: a seeded simulation replays
     * only if they do ({@code Set.copyOf}'s order changes from one JVM to the next).
     */
    @Test
    void topicsToSendAgainComeInTheSameOrderInEveryRun() {
        PeerBook book = new PeerBook(Set.of("west"), new ExchangeMetrics());
        List<String> topics = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            topics.add("topic-" + i);
        }
        Collections.shuffle(topics, new Random(7));
        Map<String, Long> sent = new HashMap<>();
        List<TopicResult> results = new ArrayList<>();
        for (String topic : topics) {
            sent.put(topic, 3L);
            results.add(TopicResult.newBuilder().setTopic(topic).setCode(TopicResult.Code.STALE).build());
        }
        book.answered("west", sent, results);

        assertThat(book.retryTopics("west")).containsExactlyElementsOf(topics.stream().sorted().toList());
        assertThat(book.retryTopics("east")).isEmpty();
    }
}
