package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.exchange.ExchangeServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.core.publisher.Mono;

/** Each endpoint of a node's admin port asks for its role: 401 without a credential, 403 with the wrong one. */
class RolesTest {
    private static final String CONFIG = """
            clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
            topics: [{name: t, initialSegments: 1, bucketBudget: 4}]
            exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 300ms}}
            security: {adminToken: admin-token, openStatus: %s}
            """;

    private EmbeddedRuntime runtime;

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void layoutOperationsTakeTheAdminTokenOnlyAndARefusedCallChangesNothing() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(CONFIG.formatted(true)));
        ClusterNode a = runtime.cluster("a");
        String split = "/admin/v2/scalable/split?topic=t&segment=0";
        assertThat(post(a.adminUrl() + split, null)).startsWith("401:").contains("no credential");
        assertThat(post(a.adminUrl() + split, "b-token")).startsWith("403:")
                .contains("cluster b may not call layout operations: it needs the admin token");
        assertThat(post(a.adminUrl() + split, "a-token")).startsWith("403:");
        assertThat(post(a.adminUrl() + split, "nope")).startsWith("403:").contains("not valid");
        String badEscape = RawHttp.send(a.adminUrl(), "POST /admin/v2/scalable/split?topic=%ZZ&segment=0 HTTP/1.1\r\n"
                + "Host: 127.0.0.1\r\nAuthorization: Bearer admin-token\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        assertThat(RawHttp.status(badEscape)).isEqualTo(400);
        assertThat(badEscape).contains("parameter 'topic' is not well percent-encoded").doesNotContain("Exception");
        assertThat(a.layout("t").epoch()).as("nothing changed").isZero();

        assertThat(post(a.adminUrl() + split, "admin-token")).startsWith("200:").contains("applied");
        assertThat(post(a.adminUrl() + ExchangeServer.EXCHANGE_PATH, "admin-token")).startsWith("403:")
                .contains("the admin may not call the exchange");
        assertThat(RawHttp.status(RawHttp.get(a.adminUrl(), "/", null))).as("open status page").isEqualTo(200);
        String metrics = RawHttp.get(a.adminUrl(), "/metrics", null);
        assertThat(RawHttp.status(metrics)).isEqualTo(200);
        assertThat(metrics).contains("verbatim_net_connections_refused_total{cluster=\"a\",port=\"admin\",reason=\"port_full\"} 0.0")
                .contains("verbatim_net_connections_refused_total{cluster=\"a\",port=\"ingest-0\",reason=\"address_full\"} 0.0")
                .contains("verbatim_net_connections_unauthenticated{cluster=\"a\",port=\"admin\"}");
        assertThat(RawHttp.status(RawHttp.get(a.adminUrl(), ExchangeServer.STATUS_PATH, null))).isEqualTo(200);
    }

    @Test
    void closedStatusTakesAnyValidToken() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(CONFIG.formatted(false)));
        String url = runtime.cluster("a").adminUrl();
        for (String path : new String[] {"/", "/metrics", ExchangeServer.STATUS_PATH}) {
            assertThat(RawHttp.status(RawHttp.get(url, path, null))).as(path).isEqualTo(401);
            assertThat(RawHttp.status(RawHttp.get(url, path, "nope"))).as(path).isEqualTo(403);
            assertThat(RawHttp.status(RawHttp.get(url, path, "b-token"))).as(path).isEqualTo(200);
            assertThat(RawHttp.status(RawHttp.get(url, path, "admin-token"))).as(path).isEqualTo(200);
        }
    }

    private static String post(String url, String token) {
        return HttpClient.create().headers(h -> {
            if (token != null) {
                h.set("Authorization", "Bearer " + token);
            }
        }).post().uri(url).send(ByteBufFlux.fromInbound(Mono.just(new byte[0])))
                .responseSingle((r, body) -> body.asString().defaultIfEmpty("").map(t -> r.status().code() + ": " + t))
                .block(Duration.ofSeconds(10));
    }
}
