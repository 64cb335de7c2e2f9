package io.verbatim.net;

/** What an endpoint requires of its caller. */
public enum Role {
    /** A cluster (its signature of the call, or its certificate): the exchange and the ingest endpoints. */
    BROKER,
    /** The admin token: layout operations and producing. */
    ADMIN,
    /**
     * Status, status page and metrics: nothing when open, otherwise the admin token, a cluster's signature or a
     * cluster's client certificate.
     */
    STATUS
}
