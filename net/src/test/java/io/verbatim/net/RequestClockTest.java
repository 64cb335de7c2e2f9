package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.net.RequestClock.Due;
import io.verbatim.net.RequestClock.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The deadlines of one connection, as a pure function of what happened on it and when. */
class RequestClockTest {
    private static final long S = 1_000_000_000L;
    /** 10 s per request, 5 s until a connection authenticates. */
    private static final NetworkLimits LIMITS = NetworkLimits.defaults();

    @Test
    void aConnectionThatSendsNothingRunsOutOfItsFirstRequestTimeoutFromWhenItOpened() {
        RequestClock c = new RequestClock(LIMITS, 100 * S);
        assertThat(c.due()).isEqualTo(new Due.At(105 * S, Limit.FIRST_REQUEST));
    }

    @Test
    void trickledHeadersAreCutAtTheFirstRequestDeadlineNotAtTheIdleTimeout() {
        RequestClock c = new RequestClock(LIMITS, 0);
        for (long t = 1; t < 60; t++) {
            c.bytes(t * S); // one byte a second: each is more of the same request
            assertThat(c.due()).isEqualTo(new Due.At(5 * S, Limit.FIRST_REQUEST));
        }
    }

    @Test
    void aRequestMustArriveWholeWithinTheRequestTimeoutOfItsFirstByte() {
        RequestClock c = new RequestClock(LIMITS.withFirstRequestTimeout(Duration.ofSeconds(30)), 0);
        c.bytes(2 * S);
        assertThat(c.due()).as("whichever ends first").isEqualTo(new Due.At(12 * S, Limit.REQUEST));
        c.requestHeaders(3 * S);
        assertThat(c.due()).as("the body counts too").isEqualTo(new Due.At(12 * S, Limit.REQUEST));
    }

    @Test
    void anAuthenticatedConnectionHasNoDeadlineBetweenRequestsAndTheRequestTimeoutFromEachFirstByte() {
        RequestClock c = new RequestClock(LIMITS, 0);
        c.bytes(1 * S);
        c.requestHeaders(1 * S);
        c.authenticated();
        assertThat(c.due()).isEqualTo(new Due.At(11 * S, Limit.REQUEST));
        c.requestEnded(2 * S);
        c.answerEnded(2 * S);
        assertThat(c.due()).as("its idle timeout is Reactor Netty's").isEqualTo(new Due.Never());
        c.bytes(100 * S);
        assertThat(c.due()).isEqualTo(new Due.At(110 * S, Limit.REQUEST));
    }

    @Test
    void nothingIsDueWhileTheNodeAnswers() {
        RequestClock c = new RequestClock(LIMITS, 0);
        c.bytes(1 * S);
        c.requestHeaders(1 * S);
        c.requestEnded(2 * S);
        assertThat(c.due()).as("an anonymous status call being answered").isEqualTo(new Due.Never());
        c.answerEnded(30 * S);
        assertThat(c.due()).as("not authenticated: its next request within the first-request timeout")
                .isEqualTo(new Due.At(35 * S, Limit.FIRST_REQUEST));
    }

    @Test
    void aBodyStillArrivingAfterTheAnswerIsStillCut() {
        RequestClock c = new RequestClock(LIMITS, 0);
        c.bytes(1 * S);
        c.requestHeaders(1 * S);
        c.answerEnded(2 * S); // refused before its body was read
        assertThat(c.due()).isEqualTo(new Due.At(5 * S, Limit.FIRST_REQUEST));
        c.requestEnded(4 * S);
        assertThat(c.due()).as("the wait for the next starts once it arrived").isEqualTo(new Due.At(9 * S, Limit.FIRST_REQUEST));
    }

    @Test
    void aWebSocketHasNoRequestDeadline() {
        RequestClock c = new RequestClock(LIMITS, 0);
        c.bytes(1 * S);
        c.requestHeaders(1 * S);
        c.authenticated();
        c.requestEnded(2 * S);
        c.upgraded();
        c.bytes(3 * S);
        assertThat(c.due()).isEqualTo(new Due.Never());
        assertThat(c.reading()).isFalse();
    }
}
