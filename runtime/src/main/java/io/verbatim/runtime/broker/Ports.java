package io.verbatim.runtime.broker;

import java.util.function.Supplier;
import reactor.netty.ChannelBindException;

/** Binding a listener of this process, with an error that names the configuration key of its port. */
public final class Ports {
    private Ports() {
    }

    /** Binds a listener; a port in use (or a host that cannot be bound) is an error naming {@code key}. */
    public static <T> T bind(String key, String host, int port, Supplier<T> binding) {
        try {
            return binding.get();
        } catch (RuntimeException e) {
            Throwable cause = e instanceof ChannelBindException && e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException(key + ": cannot listen on " + host + ":" + port + " ("
                    + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage())
                    + (port == 0 ? ")" : "; is the port in use?)"), e);
        }
    }
}
