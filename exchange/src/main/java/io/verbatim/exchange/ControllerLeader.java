package io.verbatim.exchange;

/**
 * Where a cluster's controller leader is, as one controller replica (or the brokers' process) sees it:
 * here (this process answers the exchange), at another replica's URL (a call is redirected there with
 * 307), or unknown for now (an election is under way: a call is answered 503 and retried).
 */
public sealed interface ControllerLeader {
    /** This process leads: it answers. */
    ControllerLeader HERE = new Here();

    static ControllerLeader at(String baseUrl) {
        return new At(baseUrl);
    }

    static ControllerLeader unknown(String why) {
        return new Unknown(why);
    }

    record Here() implements ControllerLeader {
    }

    /** @param baseUrl the leader's admin URL, {@code scheme://host:port} */
    record At(String baseUrl) implements ControllerLeader {
    }

    /** @param why what the caller is told (no leader elected yet, say) */
    record Unknown(String why) implements ControllerLeader {
    }
}
