package io.verbatim.metadatalog.identity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.net.SigningKey;
import org.junit.jupiter.api.Test;

/** One member's view of who is who: one key per member, listeners apart. */
class MemberKeysTest {
    private static final SigningKey C1 = SigningKey.fromSecret("c1-secret");
    private static final SigningKey C2 = SigningKey.fromSecret("c2-secret");
    private static final SigningKey BROKERS = SigningKey.fromSecret("brokers-secret");

    @Test
    void membersAreKnownByTheirKeysAndListenersApart() {
        MemberKeys k = MemberKeys.of("c1", C1).withVoter("c1", C1.verifying()).withVoter("c2", C2.verifying())
                .withListener("brokers", BROKERS.verifying());
        assertThat(k.keyOf("c2")).contains(C2.verifying());
        assertThat(k.keyOf("brokers")).contains(BROKERS.verifying());
        assertThat(k.keyOf("c9")).isEmpty();
        assertThat(k.isListener("brokers")).isTrue();
        assertThat(k.isListener("c2")).isFalse();
        assertThat(k.members()).containsExactly("brokers", "c1", "c2");
        assertThat(k.toString()).doesNotContain("secret");
    }

    @Test
    void twoMembersWithOneKeyOrAMemberBothVoterAndListenerAreRefused() {
        assertThatThrownBy(() -> MemberKeys.of("c1", C1).withVoter("c2", C2.verifying()).withVoter("c3", C2.verifying()))
                .hasMessageContaining("have the same key").hasMessageContaining("c2").hasMessageContaining("c3");
        assertThatThrownBy(() -> MemberKeys.of("c1", C1).withVoter("c2", C2.verifying()).withListener("c2",
                C2.verifying())).hasMessageContaining("c2 is named both a voter and a listener");
        assertThatThrownBy(() -> MemberKeys.of("c1", C1).withVoter("c1", C2.verifying()))
                .hasMessageContaining("member c1's own secret gives");
    }
}
