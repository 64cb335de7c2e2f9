package io.verbatim.metadatalog.transport;

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
import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Refusal;
import io.verbatim.net.LogText;
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
 * The server end of one inbound connection. The first frame must be a {@code HELLO} naming this server's
 * group, this member, and a member that is one of its peers with a known verifying key (under TLS with name
 * checks, the member the client certificate names); the server answers {@code WELCOME} with its own nonce
 * and signature, and the client must then prove who it is with a {@code PROOF}, its signature over both
 * nonces ({@link Handshake}), all within the handshake timeout; otherwise the connection is closed and the
 * refusal counted, and logged at most once per source address per interval (INFO for a real peer
 * misconfigured, DEBUG for anything else; what the peer sent escaped, {@link LogText}). After the proof,
 * each message must name the proven member as sender, this group, and this member as addressee, and a
 * member named a listener may send only what a listener sends; anything else is dropped and counted. An
 * oversized or undecodable frame closes the connection. Every exception ends here: none reaches Reactor
 * Netty or the pipeline's tail.
 */
final class InboundHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = Loggers.getLogger(InboundHandler.class);
    private enum State { AWAIT_HELLO, AWAIT_PROOF, OPEN, REFUSED, FAILED }

    private final NettyRaftTransport transport;
    private final FrameDecoder decoder;
    private State state = State.AWAIT_HELLO;
    /** The member the HELLO names, until it proves it is that member. */
    private @Nullable String claimed;
    /** The member proven: the sender of every message of this connection. */
    private @Nullable String peer;
    private byte @Nullable [] clientTranscript;
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
                case AWAIT_PROOF -> proof(ctx, frame);
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
            h = Frames.readHello(frame);
        } catch (IllegalArgumentException e) {
            refuse(ctx, Refusal.BAD_HANDSHAKE, String.valueOf(e.getMessage()), false);
            return;
        }
        String said = " (member '" + LogText.escape(h.member()) + "', group '" + LogText.escape(h.group()) + "')";
        if (!h.group().equals(transport.group())) {
            refuse(ctx, Refusal.WRONG_GROUP, "another group" + said, true);
        } else if (!transport.isPeer(h.member())) {
            refuse(ctx, Refusal.UNKNOWN_MEMBER, "a member that is not a peer" + said, true);
        } else if (!h.server().equals(transport.member())) {
            refuse(ctx, Refusal.BAD_HANDSHAKE, "a HELLO for member '" + LogText.escape(h.server()) + "'" + said, true);
        } else if (!certificateNames(ctx, h.member())) {
            refuse(ctx, Refusal.CERTIFICATE_MISMATCH, "a certificate naming "
                    + NetServer.certificateName(Connection.from(ctx.channel())).map(LogText::escape) + said, true);
        } else {
            welcome(ctx, h);
        }
    }

    /** Proves this member to the client, and waits for the client's proof. */
    private void welcome(ChannelHandlerContext ctx, Frames.Hello h) {
        byte[] nonce = Handshake.nonce();
        MemberKeys keys = transport.keys();
        byte[] signature = keys.own().sign(Handshake.transcript(Handshake.Role.SERVER, transport.group(), h.member(),
                transport.member(), h.nonce(), nonce));
        claimed = h.member();
        clientTranscript = Handshake.transcript(Handshake.Role.CLIENT, transport.group(), h.member(),
                transport.member(), h.nonce(), nonce);
        state = State.AWAIT_PROOF;
        ByteBuf welcome = ctx.alloc().buffer(160);
        Frames.writeWelcome(welcome, transport.member(), transport.group(), nonce, signature);
        ctx.writeAndFlush(welcome, ctx.voidPromise());
    }

    private void proof(ChannelHandlerContext ctx, ByteBuf frame) {
        String member = Objects.requireNonNull(claimed, "the member of a HELLO");
        byte kind = frame.isReadable() ? frame.readByte() : 0;
        if (kind != Frames.PROOF) {
            if (kind == Frames.MESSAGE) {
                transport.metrics().drop(Drop.UNAUTHENTICATED);
            }
            refuse(ctx, Refusal.BAD_HANDSHAKE, "member " + member + " sent a frame of kind " + kind
                    + " where its PROOF was due", true);
            return;
        }
        byte[] signature;
        try {
            signature = Frames.readProof(frame);
        } catch (IllegalArgumentException e) {
            refuse(ctx, Refusal.BAD_HANDSHAKE, String.valueOf(e.getMessage()), true);
            return;
        }
        boolean proven = transport.keys().keyOf(member)
                .map(k -> k.verifies(Objects.requireNonNull(clientTranscript, "the transcript of a HELLO"), signature))
                .orElse(false);
        if (!proven) {
            refuse(ctx, Refusal.BAD_SIGNATURE, "a signature that is not member " + member + "'s (is its secret the "
                    + "one whose verifying key this member holds?)", true);
            return;
        }
        open(ctx, member);
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
        clientTranscript = null;
        decoder.open();
        transport.inboundOpened(member, ctx.channel());
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

    /**
     * Closes the connection, counting {@code reason} once; {@code peerLike}: INFO, else DEBUG, at most one
     * line per source address per interval ({@link RefusalLog}).
     */
    private void refuse(ChannelHandlerContext ctx, Refusal reason, String why, boolean peerLike) {
        if (state != State.AWAIT_HELLO && state != State.AWAIT_PROOF) {
            ctx.close();
            return;
        }
        state = State.REFUSED;
        handshakeTimeout().cancel(false);
        transport.metrics().refuse(reason);
        transport.logRefusal(ctx.channel().remoteAddress(), why, peerLike);
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
        if (state == State.AWAIT_HELLO || state == State.AWAIT_PROOF) {
            refuse(ctx, tls ? Refusal.TLS : Refusal.BAD_HANDSHAKE, LogText.escape(cause.toString()), false);
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
