package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RequestTargetTest {
    private static final String LEADER = "http://east-1.example:8101";

    @Test
    void aTargetOutsideOriginFormIsNamed() {
        assertThat(RequestTarget.notOriginForm("/admin/v2/scalable/split?topic=t&segment=0")).isEmpty();
        assertThat(RequestTarget.notOriginForm("@other-host/admin/v2/scalable/split")).hasValueSatisfying(
                why -> assertThat(why).contains("is not a path from '/'"));
        assertThat(RequestTarget.notOriginForm("http://other-host/admin")).isPresent();
        assertThat(RequestTarget.notOriginForm("//other-host/admin")).hasValueSatisfying(
                why -> assertThat(why).contains("starts with '//'"));
        assertThat(RequestTarget.notOriginForm("/a\\b")).isPresent();
        assertThat(RequestTarget.notOriginForm("/a b")).isPresent();
        assertThat(RequestTarget.notOriginForm("/a#b")).isPresent();
        assertThat(RequestTarget.notOriginForm("/a%zz")).as("a bad escape is the query decoder's to name").isEmpty();
        assertThat(RequestTarget.notOriginForm("")).isPresent();
    }

    @Test
    void aLocationIsTheConfiguredUrlTheNormalizedPathAndTheQuery() {
        assertThat(RequestTarget.location(LEADER, "/admin/v2/scalable/split?topic=persistent%3A%2F%2Fp%2Fd%2Ft&segment=0"))
                .isEqualTo(LEADER + "/admin/v2/scalable/split?topic=persistent%3A%2F%2Fp%2Fd%2Ft&segment=0");
        assertThat(RequestTarget.location(LEADER + "/", "/admin/./v2/x/../scalable/split"))
                .isEqualTo(LEADER + "/admin/v2/scalable/split");
        assertThat(RequestTarget.location(LEADER, "/../../a/./b/..?q=%ZZ")).isEqualTo(LEADER + "/a/?q=%ZZ");
        assertThat(RequestTarget.location(LEADER, "/a//b")).as("inner empty segments stay").isEqualTo(LEADER + "/a//b");
        assertThat(RequestTarget.location(LEADER, "/.//other-host/x?a=@b")).as("stays on the leader's host")
                .isEqualTo(LEADER + "/other-host/x?a=@b");
        assertThat(Origin.of(RequestTarget.location(LEADER, "/.//other-host/x?a=@b")))
                .isEqualTo(Origin.of(LEADER));
        assertThatThrownBy(() -> RequestTarget.location(LEADER, "@other-host/admin"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anOriginIsSchemeHostAndPortWithTheDefaultPortMadeExplicit() {
        assertThat(Origin.of("http://Example.net/x")).isEqualTo(new Origin("http", "example.net", 80));
        assertThat(Origin.of("https://example.net:443/")).isEqualTo(Origin.of("https://example.net"));
        assertThat(Origin.of("http://example.net:8081")).isNotEqualTo(Origin.of("http://example.net:8082"));
        assertThat(Origin.of("http://example.net")).isNotEqualTo(Origin.of("https://example.net"));
        assertThat(Origin.resolve("http://a:1/x", "/y")).contains(Origin.of("http://a:1"));
        assertThat(Origin.resolve("http://a:1/x", "http://b:2/y")).contains(Origin.of("http://b:2"));
        assertThat(Origin.resolve("http://a:1/x", "http://a:1@b:2/y")).as("user information is refused").isEmpty();
        assertThat(Origin.resolve("http://a:1/x", "ftp://a:1/y")).isEmpty();
        assertThatThrownBy(() -> Origin.of("not a url")).hasMessageContaining("is not an http or https URL");
    }
}
