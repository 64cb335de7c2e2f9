package io.verbatim.metastore.transport;

import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.verbatim.metastore.proto.RaftMessageProto;
import io.verbatim.metastore.transport.RaftTransportMetrics.Drop;
import io.verbatim.metastore.transport.RaftTransportMetrics.Refusal;
import io.verbatim.net.NetServer;
import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;
import reactor.netty.Connection;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The server end of one inbound connection. The first frame must be a {@code HELLO} with the group's
 * secret, this server's group and a member that is one of its peers (under TLS with name checks, the
 * member the client certificate names), within the handshake timeout; otherwise the connection is closed,
 * the refusal counted and logged in one line (INFO for a real peer misconfigured, DEBUG for anything
 * else). After the {@code WELCOME}, each message must name that member as sender, this group, and this
 * member as addressee, or it is dropped and counted. An oversized or undecodable frame closes the
 * connection. Every exception ends here: none reaches Reactor Netty or the pipeline's tail.
 */
final class InboundHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = Loggers.getLogger(InboundHandler.class);
    private enum State { AWAIT_HELLO, OPEN, REFUSED, FAILED }

    private final NettyRaftTransport transport;
    private final FrameDecoder decoder;
    private State state = State.AWAIT_HELLO;
    private @Nullable String peer;
    private @Nullable ScheduledFuture<?> timeout;

    InboundHandler(NettyRaftTransport transport, FrameDecoder decoder) {
        this.transport = transport;
        this.decoder = decoder;
    }

    /** The clock starts when the channel is set up: under TLS, before its handshake (whose end fires active). */
    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        timeout = ctx.executor().schedule(() -> refuse(ctx, Refusal.NO_HANDSHAKE, "no handshake within "
                + transport.settings().handshakeTimeout(), false), transport.settings().handshakeTimeout().toNanos(),
                TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (!(msg instanceof ByteBuf frame)) {
                return;
            }
            switch (state) {
                case AWAIT_HELLO -> hello(ctx, frame);
                case OPEN -> message(ctx, frame);
                case REFUSED -> transport.metrics().drop(Drop.UNAUTHENTICATED);
                case FAILED -> { } // after the frame that closed it, counted once
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void hello(ChannelHandlerContext ctx, ByteBuf frame) {
        byte kind = frame.isReadable() ? frame.readByte() : 0;
        if (kind != Frames.HELLO) {
            if (kind == Frames.MESSAGE) {
                transport.metrics().drop(Drop.UNAUTHENTICATED);
            }
            refuse(ctx, Refusal.BAD_HANDSHAKE, "the first frame (kind " + kind + ") is not a HELLO", false);
            return;
        }
        Frames.Hello h;
        try {
            h = Frames.readHandshake(frame, true);
        } catch (IllegalArgumentException e) {
            refuse(ctx, Refusal.BAD_HANDSHAKE, String.valueOf(e.getMessage()), false);
            return;
        }
        // first, whatever else is wrong: constant time
        boolean secret = transport.secret().matches(Objects.requireNonNull(h.secret(), "a HELLO's secret"));
        String said = " (member " + h.member() + ", group " + h.group() + ")";
        if (!secret) {
            refuse(ctx, Refusal.BAD_SECRET, "a wrong secret" + said, true);
        } else if (!h.group().equals(transport.group())) {
            refuse(ctx, Refusal.WRONG_GROUP, "another group" + said, true);
        } else if (!transport.isPeer(h.member())) {
            refuse(ctx, Refusal.UNKNOWN_MEMBER, "a member that is not a peer" + said, true);
        } else if (!certificateNames(ctx, h.member())) {
            refuse(ctx, Refusal.CERTIFICATE_MISMATCH, "a certificate naming "
                    + NetServer.certificateName(Connection.from(ctx.channel())) + said, true);
        } else {
            open(ctx, h.member());
        }
    }

    private boolean certificateNames(ChannelHandlerContext ctx, String member) {
        if (!transport.checksCertificateNames()) {
            return true;
        }
        // No certificate name: not under TLS (name checks apply to certificates only).
        return NetServer.certificateName(Connection.from(ctx.channel())).map(member::equals).orElse(true);
    }

    private void open(ChannelHandlerContext ctx, String member) {
        handshakeTimeout().cancel(false);
        state = State.OPEN;
        peer = member;
        decoder.open();
        transport.inboundOpened(member, ctx.channel());
        ByteBuf welcome = ctx.alloc().buffer(64);
        Frames.writeWelcome(welcome, transport.member(), transport.group());
        ctx.writeAndFlush(welcome, ctx.voidPromise());
    }

    private void message(ChannelHandlerContext ctx, ByteBuf frame) {
        int bytes = frame.readableBytes() + 4;
        RaftMessageProto m;
        try {
            if (frame.readByte() != Frames.MESSAGE) {
                throw new InvalidProtocolBufferException("not a MESSAGE frame");
            }
            m = RaftMessageProto.parseFrom(frame.nioBuffer());
            if (m.getBodyCase() == RaftMessageProto.BodyCase.BODY_NOT_SET) {
                throw new InvalidProtocolBufferException("a message with no body");
            }
        } catch (InvalidProtocolBufferException | IndexOutOfBoundsException e) {
            state = State.FAILED;
            transport.metrics().drop(Drop.MALFORMED);
            LOG.debug("member {}: closing the connection of {} from {}: a malformed frame ({})", transport.member(),
                    peer, ctx.channel().remoteAddress(), e.getMessage());
            ctx.close();
            return;
        }
        transport.deliver(Objects.requireNonNull(peer, "the peer of an open connection"), m, bytes);
    }

    /** Scheduled in {@link #handlerAdded}, which Netty calls before any other event of the handler. */
    private ScheduledFuture<?> handshakeTimeout() {
        return Objects.requireNonNull(timeout, "the handshake timeout");
    }

    /** Closes the connection, counting {@code reason} once; {@code peerLike}: INFO, else DEBUG. */
    private void refuse(ChannelHandlerContext ctx, Refusal reason, String why, boolean peerLike) {
        if (state != State.AWAIT_HELLO) {
            ctx.close();
            return;
        }
        state = State.REFUSED;
        handshakeTimeout().cancel(false);
        transport.metrics().refuse(reason);
        String line = "member {}: refused the connection from {}: {}";
        if (peerLike) {
            LOG.info(line, transport.member(), ctx.channel().remoteAddress(), why);
        } else {
            LOG.debug(line, transport.member(), ctx.channel().remoteAddress(), why);
        }
        ctx.close();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof SslHandshakeCompletionEvent e && !e.isSuccess()) {
            refuse(ctx, Refusal.TLS, "the TLS handshake failed: " + e.cause(), false);
        } else if (evt instanceof IdleStateEvent) {
            LOG.debug("member {}: closing the idle connection of {} from {}", transport.member(), peer,
                    ctx.channel().remoteAddress());
            ctx.close();
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (timeout != null) {
            timeout.cancel(false);
        }
        if (peer != null) {
            transport.inboundClosed(peer, ctx.channel());
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        boolean tooLong = cause instanceof TooLongFrameException;
        boolean tls = cause instanceof SSLException || cause.getCause() instanceof SSLException;
        if (state == State.AWAIT_HELLO) {
            refuse(ctx, tls ? Refusal.TLS : Refusal.BAD_HANDSHAKE, cause.toString(), false);
            return;
        }
        if (state == State.OPEN && !(cause instanceof IOException)) {
            state = State.FAILED; // the decoder throws again on what is left when the channel closes
            transport.metrics().drop(tooLong ? Drop.OVERSIZED : Drop.MALFORMED);
            LOG.debug("member {}: closing the connection of {} from {}: {}", transport.member(), peer,
                    ctx.channel().remoteAddress(), cause instanceof DecoderException ? cause.getMessage() : cause);
        }
        ctx.close();
    }
}
