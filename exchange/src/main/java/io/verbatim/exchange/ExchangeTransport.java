package io.verbatim.exchange;

import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import reactor.core.publisher.Mono;

/** How a controller's pushes reach a peer: HTTP in a deployment, a simulated network in tests. */
@FunctionalInterface
public interface ExchangeTransport {

    /** Sends one push; errors with an {@link ExchangeException} (carrying the status) when refused. */
    Mono<ExchangeResponse> send(String peer, ExchangeRequest request);
}
