package io.verbatim.runtime.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class LeaseBookTest {

    @Test
    void aNewLeaderCountsEveryMemberAsHeardWhenItTookOverSoItExpiresNobodyWithinALease() {
        LeaseBook book = new LeaseBook(Duration.ofSeconds(10), 5_000);
        assertThat(book.lapsed(List.of("b2", "b1"), 15_000)).isEmpty();
        assertThat(book.live("b1", 15_000)).isTrue();
        assertThat(book.lapsed(List.of("b2", "b1"), 15_001)).containsExactly("b1", "b2");
    }

    @Test
    void aReportRenewsAndAMemberBeingExpiredGetsNoLeaseUntilTheExpirySettled() {
        LeaseBook book = new LeaseBook(Duration.ofSeconds(10), 0);
        assertThat(book.heard("b1", 8_000)).isTrue();
        assertThat(book.lapsed(List.of("b1", "b2"), 12_000)).containsExactly("b2");
        book.expiring("b2");
        assertThat(book.heard("b2", 12_500)).isFalse();
        assertThat(book.live("b2", 12_500)).isFalse();
        book.settled("b2");
        assertThat(book.heard("b2", 13_000)).isTrue();
        assertThat(book.live("b2", 13_000)).isTrue();
        assertThat(book.heard("b1", 7_000)).as("an older report does not move the time back").isTrue();
        assertThat(book.lapsed(List.of("b1"), 18_001)).containsExactly("b1");
    }
}
