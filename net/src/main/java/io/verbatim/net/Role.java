package io.verbatim.net;

/** What an endpoint requires of its caller. */
public enum Role {
    /** A cluster's broker credential: the exchange and the ingest endpoints. */
    BROKER,
    /** The admin token: layout operations and producing. */
    ADMIN,
    /** Status, status page and metrics: nothing when open, otherwise any valid credential. */
    STATUS
}
