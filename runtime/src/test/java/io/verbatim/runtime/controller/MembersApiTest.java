package io.verbatim.runtime.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.config.MetadataLogConfig;
import io.verbatim.metadatalog.server.Group;
import io.verbatim.metadatalog.state.RegisteredMember;
import io.verbatim.net.SigningKey;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The body of a member's registration, and where a member added at run time is fed from. */
class MembersApiTest {
    private static final String KEY = SigningKey.fromSecret("b4-secret").verifying().form();

    private static RegisteredMember parse(String json) {
        return MembersApi.member(json.getBytes(StandardCharsets.UTF_8));
    }

    private static String body(String id, String raft, String admin, String ingest, String key) {
        return """
                {"id": "%s", "raftAddress": "%s", "adminUrl": "%s", "ingestUrl": "%s", "verifyingKey": "%s"}"""
                .formatted(id, raft, admin, ingest, key);
    }

    @Test
    void aGoodBodyIsAnActiveMemberWithItsAddressesAndKey() {
        RegisteredMember m = parse(body("broker-4", "10.0.0.4:7104", "http://10.0.0.4:8104", "https://10.0.0.4:9104",
                KEY));
        assertThat(m).isEqualTo(new RegisteredMember("broker-4", RegisteredMember.State.ACTIVE, "10.0.0.4:7104",
                "https://10.0.0.4:9104", "http://10.0.0.4:8104", KEY));
    }

    @Test
    void aBadBodyIsRefusedNamingTheField() {
        String good = body("broker-4", "h:1", "http://h:2", "http://h:3", KEY);
        Map<String, String> bad = Map.of(
                "not json", "the body is not JSON",
                "[1]", "not a JSON object",
                good.replace("\"id\": \"broker-4\"", "\"id\": \"bad id\""), "id: member id 'bad id'",
                good.replace("h:1", "h"), "raftAddress 'h' is not host:port",
                good.replace("h:1", "h:70000"), "raftAddress 'h:70000'",
                good.replace("http://h:2", "ftp://h:2"), "adminUrl 'ftp://h:2'",
                good.replace("http://h:3", "http://h"), "ingestUrl 'http://h'",
                good.replace(KEY, "b4-secret"), "verifyingKey",
                good.replace("\"verifyingKey\"", "\"secret\""), "unknown field 'secret'",
                good.replace(", \"ingestUrl\": \"http://h:3\"", ""), "ingestUrl is missing");
        bad.forEach((json, why) -> assertThatThrownBy(() -> parse(json)).as(json)
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(why));
        assertThatThrownBy(() -> parse(good.replace("}", ", \"id\": \"x\"}"))).as("a field twice")
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aMemberAddedIsFedByTheVoterWithTheFewestListenersUnderTheCap() {
        Group group = new Group(List.of(new Group.Member("c1", "h:1"), new Group.Member("c2", "h:2")),
                List.of(new Group.Member("b1", "h:3"), new Group.Member("b2", "h:4")), Map.of("b1", "c1", "b2", "c1"));
        RegisteredMember b3 = new RegisteredMember("b3", RegisteredMember.State.ACTIVE, "h:5", "http://h:6",
                "http://h:7", KEY);
        MetadataLogConfig on = MetadataLogConfig.defaults().withEnabled(true);
        Group next = RegisteredMembers.withListener(group, b3, on);
        assertThat(next.listenerIds()).containsExactly("b1", "b2", "b3");
        assertThat(next.delegations()).containsEntry("b3", "c2").containsEntry("b1", "c1");
        assertThat(RegisteredMembers.withListener(next, b3, on).listeners()).as("added once").hasSize(3);
        assertThat(RegisteredMembers.withListener(group, b3, MetadataLogConfig.defaults()).delegations())
                .as("delegation off: the leader feeds it").doesNotContainKey("b3");
    }
}
