package io.verbatim.metadatalog.identity;

import io.verbatim.net.SigningKey;
import io.verbatim.net.VerifyingKey;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * One member's view of who is who in its metadata log: its own id and signing key, and the verifying key
 * of every member it may talk to, voters and listeners apart. A listener may never speak as a voter: the
 * transport refuses, from a member named here as a listener, every message only a voter sends (votes asked
 * or granted, appends, snapshots, a leadership hand-over).
 *
 * @param self this member's id
 * @param own this member's signing key (from its own secret)
 * @param voters each voter's verifying key, by member id
 * @param listeners each listener's verifying key, by member id
 */
public record MemberKeys(String self, SigningKey own, Map<String, VerifyingKey> voters,
        Map<String, VerifyingKey> listeners) {

    public MemberKeys {
        if (self == null || self.isBlank()) {
            throw new IllegalArgumentException("self must not be empty");
        }
        Objects.requireNonNull(own, "own");
        voters = Map.copyOf(voters);
        listeners = Map.copyOf(listeners);
        for (String l : listeners.keySet()) {
            if (voters.containsKey(l)) {
                throw new IllegalArgumentException("member " + l + " is named both a voter and a listener");
            }
        }
        VerifyingKey mine = voters.containsKey(self) ? voters.get(self) : listeners.get(self);
        if (mine != null && !mine.equals(own.verifying())) {
            throw new IllegalArgumentException("member " + self + "'s own secret gives " + own.verifying()
                    + ", not the verifying key it is given for itself, " + mine);
        }
        Map<VerifyingKey, String> seen = new LinkedHashMap<>();
        for (Map<String, VerifyingKey> keys : List.of(voters, listeners)) {
            keys.forEach((member, key) -> {
                String other = seen.putIfAbsent(key, member);
                if (other != null) {
                    throw new IllegalArgumentException("members " + other + " and " + member + " have the same key "
                            + key + ": each member needs a secret of its own");
                }
            });
        }
    }

    /** {@code self} alone, knowing no other member yet. */
    public static MemberKeys of(String self, SigningKey own) {
        return new MemberKeys(self, own, Map.of(), Map.of());
    }

    /** These keys and voter {@code member}'s. */
    public MemberKeys withVoter(String member, VerifyingKey key) {
        Map<String, VerifyingKey> v = new LinkedHashMap<>(voters);
        v.put(member, key);
        return new MemberKeys(self, own, v, listeners);
    }

    /** These keys and listener {@code member}'s. */
    public MemberKeys withListener(String member, VerifyingKey key) {
        Map<String, VerifyingKey> l = new LinkedHashMap<>(listeners);
        l.put(member, key);
        return new MemberKeys(self, own, voters, l);
    }

    /** {@code member}'s verifying key, if it is known. */
    public Optional<VerifyingKey> keyOf(String member) {
        VerifyingKey k = voters.get(member);
        return Optional.ofNullable(k != null ? k : listeners.get(member));
    }

    /** Whether {@code member} is named a listener: it may not speak as a voter. */
    public boolean isListener(String member) {
        return listeners.containsKey(member);
    }

    /** Every member named, voters and listeners. */
    public Set<String> members() {
        Set<String> all = new TreeSet<>(voters.keySet());
        all.addAll(listeners.keySet());
        return all;
    }

    /** Never the signing key. */
    @Override
    public String toString() {
        return "keys of " + self + " (voters " + voters.keySet() + ", listeners " + listeners.keySet() + ")";
    }
}
