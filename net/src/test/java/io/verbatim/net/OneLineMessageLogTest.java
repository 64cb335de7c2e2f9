package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;
import reactor.netty.http.logging.HttpMessageArgProvider;
import reactor.netty.http.logging.HttpMessageType;

class OneLineMessageLogTest {
    @Test
    void aRequestWithAThousandHeadersIsDescribedOnOneLine() {
        HttpHeaders headers = new DefaultHttpHeaders(false);
        for (int i = 0; i < 1000; i++) {
            headers.add("X-Bad-" + i, "v\r\n");
        }
        HttpMessageArgProvider request = new HttpMessageArgProvider() {
            @Override
            public HttpMessageType httpMessageType() {
                return HttpMessageType.REQUEST;
            }

            @Override
            public String method() {
                return "GET";
            }

            @Override
            public String uri() {
                return "/ingest/v1/session?topic=" + "x".repeat(1000) + "\n";
            }

            @Override
            public HttpHeaders headers() {
                return headers;
            }

            @Override
            public DecoderResult decoderResult() {
                return DecoderResult.failure(new IllegalArgumentException("a header name cannot contain\n a space"));
            }
        };
        String line = OneLineMessageLog.INSTANCE.warn(request);
        assertThat(line).doesNotContain("\n").doesNotContain("\r").hasSizeLessThan(500)
                .startsWith("GET /ingest/v1/session?topic=xxx").contains("not decoded: java.lang.IllegalArgumentException")
                .endsWith("(1000 header(s), not shown)");
    }
}
