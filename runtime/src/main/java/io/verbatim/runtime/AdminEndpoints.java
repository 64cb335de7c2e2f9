package io.verbatim.runtime;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.verbatim.exchange.ControllerLeader;
import io.verbatim.net.NetServer;
import io.verbatim.net.Role;
import io.verbatim.runtime.controller.AdminApi;
import io.verbatim.runtime.controller.AdminOperations;
import io.verbatim.runtime.controller.ControllerLink;
import io.verbatim.runtime.controller.DelegationApi;
import io.verbatim.runtime.controller.MembersApi;
import io.verbatim.runtime.controller.LocalMetadataLog;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * What a cluster's admin port answers besides the exchange: the admin operations, the listener delegation, the
 * produce, consume and image endpoints, the Prometheus scrape and the status page; and the metadata log's test hooks.
 */
final class AdminEndpoints {
    private static final Logger LOG = Loggers.getLogger(AdminEndpoints.class);

    private AdminEndpoints() {
    }

    /**
     * Registers the admin routes of {@code node}. A brokers' process ({@code link} present) redirects the admin and
     * delegation calls to the controller leader; an in-process group changes on its own leader.
     */
    static void register(HttpServerRoutes routes, ClusterNode node, AdminOperations operations, NetServer net,
            Optional<ControllerLink> link, Optional<LocalMetadataLog> group, boolean onPulsar, int maxBodyBytes,
            RateWindow rates, Scheduler timer) {
        (link.isPresent() ? new AdminApi(operations, net, link.get()::leader) : new AdminApi(operations, net))
                .register(routes);
        if (link.isPresent()) {
            new DelegationApi(DelegationApi.Log.NONE, net, link.get()::leader).register(routes);
            new MembersApi(MembersApi.Members.NONE, net, link.get()::leader).register(routes);
        } else {
            group.ifPresent(g -> new DelegationApi(g, net, () -> ControllerLeader.HERE).register(routes));
            new MembersApi(MembersApi.Members.oneProcess(onPulsar ? "cluster " + node.name() + " runs as one process "
                    + "(its controller in it): name controllers and brokerMembers in its file to run more broker "
                    + "processes" : MembersApi.Members.embedded(node.name())), net, () -> ControllerLeader.HERE)
                    .register(routes);
        }
        new TopicsApi(node, net, maxBodyBytes).register(routes);
        new ConsumeApi(node, net, timer).register(routes);
        PrometheusMeterRegistry registry = node.registry();
        routes.get("/metrics", net.guard(Role.STATUS, "the metrics", (request, response) -> response
                .header(HttpHeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
                .sendString(Mono.fromCallable(registry::scrape), StandardCharsets.UTF_8)));
        new StatusPage(node, rates, timer, net).register(routes);
    }

    /** Kills the member of {@code group} that leads it, as a crash would; returns the member killed. */
    static String killLeader(String cluster, LocalMetadataLog group) {
        String leader = group.leader().orElseThrow(() -> new IllegalStateException(cluster
                + "'s metadata log has no leader now"));
        LOG.info("{}: killing controller replica {}, the metadata log's leader", cluster, leader);
        group.kill(leader);
        return leader;
    }
}
