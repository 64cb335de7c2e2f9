package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.exchange.Rebucket;
import io.verbatim.model.HashRange;
import io.verbatim.model.Outcome;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * The admin endpoint's rebucket as an operator sees it, decided by the controller and only rendered by the endpoint:
 * a higher count applies at once (200), a lower one is a cold mark on the segment's range (202), a sealed segment is
 * refused (409), each answer's JSON exactly.
 */
class AdminRebucketTest {
    private EmbeddedRuntime runtime;

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    private static HttpResponse<String> post(String url) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", "Bearer admin-token").POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Clusters a and b with topic t (one segment of 4 buckets), the policy off; a once it may make its own changes. */
    private ClusterNode startedA() {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
                topics: [{name: t, initialSegments: 1, bucketBudget: 4}]
                exchange: {antiEntropyInterval: 200ms, retry: {initial: 20ms, max: 200ms}}
                autoScale: {enabled: false}
                security: {adminToken: admin-token}
                """));
        ClusterNode a = runtime.cluster("a");
        Flux.interval(Duration.ofMillis(20)).filter(t -> !a.controller().deferringOwnChanges())
                .blockFirst(Duration.ofSeconds(20));
        return a;
    }

    @Test
    void aHigherCountAppliesALowerOneIsAColdMarkASealedSegmentIsRefused() throws Exception {
        ClusterNode a = startedA();
        String rebucket = a.adminUrl() + "/admin/v2/scalable/rebucket?topic=t";

        HttpResponse<String> raised = post(rebucket + "&segment=0&bucketCount=8");
        assertThat(raised.statusCode()).as(raised.body()).isEqualTo(200);
        assertThat(raised.body()).isEqualTo("{\"outcome\":\"applied\",\"topic\":\"t\",\"epoch\":1,\"created\":[1]}\n");
        assertThat(a.layout("t").activeSegments().get(0).buckets().count()).as("served here on the answer").isEqualTo(8);

        HttpResponse<String> lowered = post(rebucket + "&segment=1&bucketCount=2");
        assertThat(lowered.statusCode()).as(lowered.body()).isEqualTo(202);
        assertThat(lowered.body()).isEqualTo("{\"outcome\":\"marked-cold\",\"range\":\"0000-ffff\",\"bucketCount\":2,"
                + "\"note\":\"lowered on every cluster once each issued it or holds no more there\"}\n");
        assertThat(a.controller().exchangedMarksDescribed("t").bucketLowerings()).containsEntry("0000-ffff", 2);
        // Not to 2 until b issues it too. The layout may move meanwhile: garbage collection prunes the sealed segment
        // 0 once drained, and the mark may lower a's count to what b holds there (4) while b has not yet taken the 8.
        assertThat(a.layout("t").activeSegments()).as("nothing lowered to 2 until b issues it too")
                .singleElement().satisfies(s -> assertThat(s.buckets().count()).isIn(4, 8));

        HttpResponse<String> sealed = post(rebucket + "&segment=0&bucketCount=2");
        assertThat(sealed.statusCode()).as(sealed.body()).isEqualTo(409);
        assertThat(sealed.body()).contains("\"outcome\":\"refused\"").contains("\"reason\":\"SEGMENT_SEALED\"");
    }

    /** The embedding API keeps both: a rollover that refuses a lower count, and the operator's rebucket that marks it. */
    @Test
    void theNodesRolloverRefusesALowerCountWhereTheOperatorsRebucketMarksIt() {
        ClusterNode a = startedA();

        assertThat(a.rebucket("t", 0, 2).block()).isInstanceOfSatisfying(Outcome.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(Outcome.Refusal.LOWERS_BUCKETS));
        assertThat(a.controller().exchangedMarksDescribed("t").bucketLowerings()).as("nothing marked").isEmpty();

        assertThat(a.rebucket("t", 0, 8).block()).isInstanceOf(Outcome.Applied.class);
        assertThat(a.rebucketOrMarkCold("t", 1, 2).block()).isEqualTo(new Rebucket.MarkedCold(HashRange.FULL, 2));
        assertThat(a.controller().exchangedMarksDescribed("t").bucketLowerings()).containsEntry("0000-ffff", 2);
    }
}
