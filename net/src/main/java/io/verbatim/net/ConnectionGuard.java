package io.verbatim.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.AttributeKey;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.NettyPipeline;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The I/O around one connection's {@link RequestClock}: two handlers in its pipeline tell the clock what
 * happens (the first byte of a request, before the HTTP codec; a request's headers and end, an answer's
 * start and end, an upgrade, after it), a task on the port's timer fires at the clock's deadline, and an
 * expired connection is closed, with a {@code 408} first when part of a request came and no answer started.
 * On a WebSocket, a frame with an RSV bit set fails the connection (close 1002): no port negotiates an
 * extension. Every event runs on the connection's event loop.
 */
final class ConnectionGuard {
    private static final Logger LOG = Loggers.getLogger(ConnectionGuard.class);
    private static final AttributeKey<ConnectionGuard> KEY = AttributeKey.valueOf("verbatim.connectionGuard");
    private static final byte[] TIMED_OUT = "the request did not arrive whole in time\n".getBytes(StandardCharsets.UTF_8);

    private final Channel channel;
    private final NetServer.Port port;
    private final Scheduler timer;
    private final RequestClock clock;
    private final String address;
    private @Nullable Disposable task;
    private long taskAt;
    private long generation;
    /** An answer's headers went out and its end did not yet. */
    private boolean answering;
    private volatile boolean waiting = true;

    ConnectionGuard(Channel channel, NetServer.Port port, NetworkLimits limits, Scheduler timer, String address) {
        this.channel = channel;
        this.port = port;
        this.timer = timer;
        this.address = address;
        this.clock = new RequestClock(limits, now());
    }

    /** The guard of {@code channel}, if its port set one up. */
    static @Nullable ConnectionGuard of(Channel channel) {
        return channel.attr(KEY).get();
    }

    String address() {
        return address;
    }

    /** Puts the two handlers around the HTTP codec and starts the first-request deadline. */
    void install() {
        channel.attr(KEY).set(this);
        ChannelPipeline p = channel.pipeline();
        if (p.get(NettyPipeline.HttpCodec) != null) {
            p.addBefore(NettyPipeline.HttpCodec, "verbatim.requestBytes", new Bytes());
            p.addAfter(NettyPipeline.HttpCodec, "verbatim.requests", new Messages());
        }
        channel.closeFuture().addListener(f -> cancel());
        schedule();
    }

    /** A request on this connection authenticated: it is never evicted, and its first-request deadline ends. */
    void authenticated() {
        if (!channel.eventLoop().inEventLoop()) {
            channel.eventLoop().execute(this::authenticated);
            return;
        }
        if (!clock.isAuthenticated()) {
            clock.authenticated();
            port.authenticated(this);
            schedule();
        }
    }

    /** Closes the connection: it made room for a new one. */
    void evict() {
        channel.close();
    }

    private long now() {
        return timer.now(TimeUnit.NANOSECONDS);
    }

    /** Whether it waits for a request (its last answer ended, nothing of a next one came); read by tests. */
    boolean waiting() {
        return waiting;
    }

    /** A task at the clock's deadline, unless one is due no later already (it looks again when it fires). */
    private void schedule() {
        waiting = clock.waiting();
        if (!(clock.due() instanceof RequestClock.Due.At at) || !channel.isOpen()) {
            return;
        }
        if (task != null && taskAt - at.nanos() <= 0) {
            return;
        }
        cancel();
        long mine = ++generation;
        taskAt = at.nanos();
        Runnable firing = () -> channel.eventLoop().execute(() -> fire(mine));
        long delay = Math.max(0, at.nanos() - now());
        try {
            task = timer.schedule(firing, delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException stopped) {
            // The node stopped and disposed its timer, while its stopped ports still answer the connections they
            // have (503 naming the stop): their deadlines run on the shared clock from now on.
            task = Schedulers.parallel().schedule(firing, delay, TimeUnit.NANOSECONDS);
        }
    }

    private void cancel() {
        if (task != null) {
            task.dispose();
            task = null;
        }
    }

    private void fire(long which) {
        if (which != generation || !channel.isOpen()) {
            return;
        }
        task = null;
        if (clock.due() instanceof RequestClock.Due.At at) {
            if (at.nanos() - now() > 0) {
                schedule();
                return;
            }
            expire(at.limit());
        }
    }

    private void expire(RequestClock.Limit limit) {
        port.refused(limit == RequestClock.Limit.FIRST_REQUEST ? Refusal.FIRST_REQUEST_TIMEOUT : Refusal.REQUEST_TIMEOUT,
                address);
        ChannelHandlerContext codec = channel.pipeline().context(Messages.class);
        if (clock.reading() && !answering && codec != null) {
            FullHttpResponse timedOut = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    HttpResponseStatus.REQUEST_TIMEOUT, Unpooled.wrappedBuffer(TIMED_OUT));
            timedOut.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                    .set(HttpHeaderNames.CONTENT_LENGTH, TIMED_OUT.length)
                    .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            // written below the Reactor Netty handlers: only the codec (and TLS) see it
            codec.writeAndFlush(timedOut).addListener(ChannelFutureListener.CLOSE);
        } else {
            channel.close();
        }
    }

    /** Before the HTTP codec: the bytes of a request as they arrive. */
    private final class Bytes extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof ByteBuf b && b.isReadable() && !clock.reading()) {
                clock.bytes(now());
                schedule();
            }
            ctx.fireChannelRead(msg);
        }
    }

    /** After the HTTP codec: requests and answers; after an upgrade, the WebSocket's frames. */
    private final class Messages extends ChannelDuplexHandler {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof WebSocketFrame frame && frame.rsv() != 0) {
                // No port negotiates a WebSocket extension, so RFC 6455 (5.2) says fail the connection: the frame
                // is not passed on, whatever it carries.
                frame.release();
                LOG.debug("{}: a WebSocket frame with RSV bits {} set, no extension negotiated: closed (1002)",
                        port.name(), frame.rsv());
                ctx.writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.PROTOCOL_ERROR,
                        "RSV bits set without a negotiated extension")).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            if (msg instanceof HttpRequest) {
                clock.requestHeaders(now());
            }
            if (msg instanceof LastHttpContent) {
                clock.requestEnded(now());
            }
            schedule();
            ctx.fireChannelRead(msg);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            boolean interim = false;
            if (msg instanceof HttpResponse r) {
                int status = r.status().code();
                if (status == HttpResponseStatus.SWITCHING_PROTOCOLS.code()) {
                    clock.upgraded();
                }
                interim = status >= 100 && status < 200;
                answering = !interim;
            }
            if (msg instanceof LastHttpContent && !interim) {
                answering = false;
                clock.answerEnded(now());
                schedule();
            }
            ctx.write(msg, promise);
        }
    }
}
