package io.verbatim.net;

/**
 * Who is calling, once authenticated: a cluster of the configuration (its signature of the call, or under
 * mutual TLS its certificate), the operator (the admin token), or nobody in particular on an endpoint
 * open without a credential.
 */
public sealed interface Principal {

    /** A cluster's brokers and controllers: they replicate into this cluster and exchange layouts with it. */
    record Cluster(String name) implements Principal {
        @Override
        public String toString() {
            return "cluster " + name;
        }
    }

    /** The operator: layout operations (split, rebucket, merge, cold marks) and producing. */
    record Admin() implements Principal {
        @Override
        public String toString() {
            return "the admin";
        }
    }

    /** No credential, on an endpoint that needs none (the status endpoints when they are open). */
    record Anonymous() implements Principal {
        @Override
        public String toString() {
            return "an anonymous caller";
        }
    }
}
