package io.verbatim.metadatalog.state;

import java.util.regex.Pattern;

/**
 * A broker member as the metadata log records it: its state, and where it is reached (for a member the
 * configuration does not name; empty strings for one it does).
 *
 * @param id the member id, as in the metadata log's group
 * @param state whether it may be given segments
 * @param raftAddress {@code host:port} of its metadata log transport
 * @param ingestUrl its ingest endpoint's URL
 * @param adminUrl its admin port's URL
 * @param verifyingKey the key its signed calls verify with ({@code ed25519:<base64>})
 */
public record RegisteredMember(String id, State state, String raftAddress, String ingestUrl, String adminUrl,
        String verifyingKey) {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,31}");

    /** Whether a member takes segments. */
    public enum State {
        /** It takes segments. */
        ACTIVE,
        /** It is leaving: the leader moves its segments away and gives it none. */
        DRAINING,
        /** It left: it owns nothing and is no longer in the group. */
        REMOVED
    }

    public RegisteredMember {
        if (id == null || !ID.matcher(id).matches()) {
            throw new IllegalArgumentException("member id '" + id + "' is not a member id (expected letters, digits, "
                    + "'_', '-', starting with a letter or digit, at most 32 characters)");
        }
        if (state == null || raftAddress == null || ingestUrl == null || adminUrl == null || verifyingKey == null) {
            throw new IllegalArgumentException("member " + id + " has no null parts");
        }
    }

    /** A member the configuration names: only its id and state are recorded. */
    public static RegisteredMember configured(String id, State state) {
        return new RegisteredMember(id, state, "", "", "", "");
    }

    public RegisteredMember withState(State value) {
        return new RegisteredMember(id, value, raftAddress, ingestUrl, adminUrl, verifyingKey);
    }
}
