package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class QueryTest {
    @Test
    void parametersAreDecodedAndTheFirstValueCounts() {
        assertThat(Query.parse("/p?topic=persistent%3A%2F%2Fa%2Fb&segment=1&segment=2&flag"))
                .isEqualTo(Map.of("topic", "persistent://a/b", "segment", "1", "flag", ""));
        assertThat(Query.parse("/p")).isEmpty();
    }

    @Test
    void aBadPercentEscapeNamesItsParameter() {
        assertThatThrownBy(() -> Query.parse("/p?segment=1&topic=%ZZ")).isInstanceOf(Query.BadParameter.class)
                .hasMessageContaining("parameter 'topic' is not well percent-encoded ('%ZZ')");
        assertThatThrownBy(() -> Query.parse("/p?to%G1pic=x")).isInstanceOf(Query.BadParameter.class)
                .hasMessageContaining("the name of parameter 'to%G1pic'");
    }
}
