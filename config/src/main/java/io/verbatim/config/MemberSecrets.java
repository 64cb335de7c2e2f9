package io.verbatim.config;

import io.verbatim.net.Token;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads the credentials of a cluster's metadata log's members when its controller replicas run as processes of
 * their own: each replica's {@code clusters[].controllers[].secret}, and each broker member's
 * {@code clusters[].brokerMembers[].secret} or the one brokers process's {@code clusters[].brokersSecret}. Each
 * member proves who it is with a key derived from a secret of its own; no secret is shared by the members. The
 * group secret {@code clusters[].controllerSecret} is refused, naming what replaced it.
 */
final class MemberSecrets {
    private static final String FORMS = "the member's own secret or env:NAME where it runs, its verifying key "
            + "ed25519:<base64> elsewhere";

    private MemberSecrets() {
    }

    /** The members' credentials given in cluster section {@code s}, by member id (a missing one is absent). */
    static Map<String, MemberCredential> read(Section s, Function<String, String> env) {
        if (s.has("controllerSecret")) {
            throw new ConfigException(s.key("controllerSecret"), "is replaced by a secret per member of the metadata "
                    + "log (expected clusters[].controllers[].secret on each controller replica and "
                    + "clusters[].brokersSecret for the brokers' process, or clusters[].brokerMembers[].secret on each "
                    + "broker member: " + FORMS + "; the group's one secret let "
                    + "any process speak as any member)");
        }
        Map<String, MemberCredential> out = new LinkedHashMap<>();
        List<Section> controllers = s.sections("controllers");
        for (Section c : controllers) {
            String id = c.requiredString("id", "the replica's member id");
            credential(c, "secret", env).ifPresent(m -> out.put(id, m));
        }
        for (Section b : s.sections("brokerMembers")) {
            String id = b.requiredString("id", "the broker member's id");
            credential(b, "secret", env).ifPresent(m -> out.put(id, m));
        }
        Optional<MemberCredential> brokers = credential(s, "brokersSecret", env);
        if (brokers.isPresent() && controllers.isEmpty()) {
            throw new ConfigException(s.key("brokersSecret"), "is given, but the cluster names no controllers (its "
                    + "metadata log then runs inside the brokers' process, whose members need no secret)");
        }
        brokers.ifPresent(m -> out.put(ControllerReplica.BROKERS, m));
        List<MemberCredential> given = List.copyOf(out.values());
        for (int j = 0; j < given.size(); j++) {
            for (int i = 0; i < j; i++) {
                if (given.get(i).verifying().equals(given.get(j).verifying())) {
                    throw new ConfigException(given.get(j).key(), "is the same secret as " + given.get(i).key()
                            + " (expected a secret of its own per member: a member proves who it is with it)");
                }
            }
        }
        return out;
    }

    /** Refuses a member's secret that is also a cluster's token or the admin token. */
    static void apart(List<SecurityConfig.ClusterCredentials> credentials, Optional<Token> admin) {
        for (SecurityConfig.ClusterCredentials owner : credentials) {
            for (MemberCredential m : owner.members().values()) {
                for (SecurityConfig.ClusterCredentials other : credentials) {
                    if (m.sameSecretAs(other.token())) {
                        throw new ConfigException(m.key(), "is the same as " + other.key() + " (expected a secret of "
                                + "the member's own, apart from every token)");
                    }
                }
                if (admin.isPresent() && m.sameSecretAs(admin.get())) {
                    throw new ConfigException(m.key(), "is the same as security.adminToken (expected a secret of the "
                            + "member's own, apart from every token)");
                }
            }
        }
    }

    private static Optional<MemberCredential> credential(Section s, String name, Function<String, String> env) {
        Optional<String> given = s.optionalString(name);
        if (given.isEmpty()) {
            return Optional.empty();
        }
        String value = given.get();
        String from = "";
        if (value.startsWith("env:")) {
            String variable = value.substring(4);
            value = env.apply(variable);
            if (value == null || value.isEmpty()) {
                throw new ConfigException(s.key(name), "'env:" + variable + "' names an environment variable that is "
                        + "not set (expected " + FORMS + " in it)");
            }
            from = " (from env:" + variable + ")";
        }
        try {
            return Optional.of(MemberCredential.parse(s.key(name), value));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(s.key(name), e.getMessage() + from);
        }
    }

    /** {@code ed25519:...} forms and secrets the members of a cluster may be given in, for error messages. */
    static String forms() {
        return FORMS;
    }
}
