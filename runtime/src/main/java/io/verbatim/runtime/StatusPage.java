package io.verbatim.runtime;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.verbatim.exchange.ExchangeServer;
import io.verbatim.exchange.LayoutChange;
import io.verbatim.net.NetServer;
import io.verbatim.net.Role;
import io.verbatim.runtime.controller.AdminApi;
import io.verbatim.runtime.status.StatusJson;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * What an operator looks at on a node's admin port: {@code GET /}, a live page (one classpath resource,
 * no external script, font or style: it works offline) whose script polls two JSON documents of the same
 * origin every second and draws them; {@code GET /admin/v2/scalable/status}, the node's status (the
 * controller's, with the replicators); and {@code GET /admin/v2/scalable/rates}, the rates history:
 * <pre>{@code
 * {"cluster": "us-east", "nowMillis": …, "stepMillis": 1000, "historySeconds": 600, "currentSeconds": 5,
 *  "current": {"eu-west": {"verbatim": 812.4, "rebatched": 0.0}, …},      // over the last currentSeconds
 *  "atMillis": [t1, t2, …],                                               // when each step ended, oldest first
 *  "remotes": {"eu-west": {"verbatim": [v1, v2, …], "rebatched": [r1, r2, …]}, …},   // entries/s per step
 *  "layoutChanges": [{"topic": …, "atMillis": …, "epoch": 3, "what": "split 0000-ffff-0", "boundary": 32768,
 *                     "why": "own"}, …]}                                  // within the history, oldest first
 * }</pre>
 * Times are the runtime's clock in milliseconds; the page draws them relative to {@code nowMillis}.
 */
final class StatusPage {
    static final String RATES_PATH = AdminApi.PREFIX + "rates";
    static final String RESOURCE = "status-page.html";
    private static final byte[] PAGE = load();

    private final ClusterNode node;
    private final RateWindow rates;
    private final Scheduler clock;
    private final NetServer net;

    /** @param net who may read the status and rates (anyone unless {@code security.openStatus} is false) */
    StatusPage(ClusterNode node, RateWindow rates, Scheduler clock, NetServer net) {
        this.node = node;
        this.rates = rates;
        this.clock = clock;
        this.net = net;
    }

    /**
     * The page and what it reads, each for the status role: anyone while {@code security.openStatus}, else a
     * valid token (which a browser cannot send: a closed status is for scrapers and the command line).
     */
    void register(HttpServerRoutes routes) {
        routes.get(ExchangeServer.STATUS_PATH, net.guard(Role.STATUS, "the status endpoint",
                        (request, response) -> StatusJson.send(response, node.status())))
                .get(RATES_PATH, net.guard(Role.STATUS, "the rates", (request, response) -> StatusJson.send(response,
                        Mono.fromCallable(this::rates))))
                .get("/", net.guard(Role.STATUS, "the status page", (request, response) -> response
                        .header(HttpHeaderNames.CONTENT_TYPE, "text/html; charset=utf-8")
                        .header(HttpHeaderNames.CACHE_CONTROL, "no-store")
                        .sendByteArray(Mono.just(PAGE))));
    }

    /** The body of {@code GET /admin/v2/scalable/rates}. */
    Map<String, Object> rates() {
        long now = clock.now(TimeUnit.MILLISECONDS);
        RateWindow.History h = rates.history();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("cluster", node.name());
        out.put("nowMillis", now);
        out.put("stepMillis", RateWindow.STEP_MILLIS);
        out.put("historySeconds", RateWindow.HISTORY_SECONDS);
        out.put("currentSeconds", RateWindow.SECONDS);
        Map<String, Object> current = new LinkedHashMap<>();
        rates.snapshot().forEach((remote, r) -> current.put(remote, Map.of("verbatim", round(r.verbatim()),
                "rebatched", round(r.rebatched()))));
        out.put("current", current);
        out.put("atMillis", h.atMillis());
        Map<String, Object> remotes = new LinkedHashMap<>();
        h.verbatim().forEach((remote, v) -> remotes.put(remote, Map.of("verbatim", rounded(v),
                "rebatched", rounded(Objects.requireNonNull(h.rebatched().get(remote))))));
        out.put("remotes", remotes);
        out.put("layoutChanges", changesSince(now - RateWindow.HISTORY_SECONDS * 1000L));
        return out;
    }

    private List<Map<String, Object>> changesSince(long sinceMs) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (String topic : node.topics()) {
            for (LayoutChange c : node.controller().recentChanges(topic)) {
                if (c.atMillis() >= sinceMs) {
                    Map<String, Object> one = new LinkedHashMap<>();
                    one.put("topic", topic);
                    one.put("atMillis", c.atMillis());
                    one.put("epoch", c.epoch());
                    one.put("what", c.what());
                    one.put("boundary", c.boundary());
                    one.put("why", c.why());
                    out.add(one);
                }
            }
        }
        out.sort(Comparator.comparingLong(m -> (Long) m.get("atMillis")));
        return out;
    }

    private static double round(double v) {
        return Math.round(v * 10) / 10.0;
    }

    private static double[] rounded(double[] values) {
        double[] out = new double[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = round(values[i]);
        }
        return out;
    }


    private static byte[] load() {
        try (InputStream in = StatusPage.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the status page " + RESOURCE + " is missing from the classpath");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
