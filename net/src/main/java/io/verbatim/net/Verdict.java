package io.verbatim.net;

/** An authentication's answer: the caller, or a refusal with its HTTP status and why. */
public sealed interface Verdict {

    record Allowed(Principal principal) implements Verdict {
    }

    /** {@code 401} when no credential came, {@code 403} when one came that does not do. */
    record Refused(int status, String reason) implements Verdict {
    }
}
