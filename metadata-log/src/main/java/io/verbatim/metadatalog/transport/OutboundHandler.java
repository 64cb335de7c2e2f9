package io.verbatim.metadatalog.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.verbatim.net.LogText;
import io.verbatim.net.NetServer;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.netty.Connection;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The client end of one connection attempt to a peer: sends {@code HELLO} with a fresh nonce when the
 * channel is active, waits at most the handshake timeout for a {@code WELCOME} from the member it dialled,
 * signed with that member's key over this attempt's nonce (under TLS with name checks, also from the member
 * its certificate names), answers with its own {@code PROOF}, then lets the {@link PeerLink} write. Nothing
 * but the {@code WELCOME} is expected back; anything else closes the connection. Exceptions end here.
 */
final class OutboundHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = Loggers.getLogger(OutboundHandler.class);
    private final PeerLink link;
    private final NettyRaftTransport transport;
    private final byte[] nonce = Handshake.nonce();
    private volatile @Nullable Channel channel;
    private volatile boolean closed;
    private boolean welcomed;
    private @Nullable ScheduledFuture<?> timeout;

    OutboundHandler(PeerLink link, NettyRaftTransport transport) {
        this.link = link;
        this.transport = transport;
    }

    /** Closes this attempt's connection, whenever it opens. */
    void close() {
        closed = true;
        Channel ch = channel;
        if (ch != null) {
            ch.close();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        if (closed) {
            ctx.close();
            return;
        }
        ByteBuf hello = ctx.alloc().buffer(96);
        Frames.writeHello(hello, transport.member(), transport.group(), link.peer(), nonce);
        ctx.writeAndFlush(hello, ctx.voidPromise());
        timeout = ctx.executor().schedule(() -> {
            LOG.debug("member {}: no WELCOME from {} at {} within {}", transport.member(), link.peer(),
                    ctx.channel().remoteAddress(), transport.settings().handshakeTimeout());
            ctx.close();
        }, transport.settings().handshakeTimeout().toNanos(), TimeUnit.NANOSECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (welcomed || !(msg instanceof ByteBuf frame) || !welcome(ctx, frame)) {
                ctx.close();
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private boolean welcome(ChannelHandlerContext ctx, ByteBuf frame) {
        Frames.Welcome w;
        try {
            if (!frame.isReadable() || frame.readByte() != Frames.WELCOME) {
                return false;
            }
            w = Frames.readWelcome(frame);
        } catch (IllegalArgumentException e) {
            LOG.debug("member {}: {} at {} answered no WELCOME: {}", transport.member(), link.peer(),
                    ctx.channel().remoteAddress(), e.getMessage());
            return false;
        }
        String certified = transport.checksCertificateNames()
                ? NetServer.certificateName(Connection.from(ctx.channel())).orElse(null) : null;
        if (!w.member().equals(link.peer()) || !w.group().equals(transport.group())
                || certified != null && !certified.equals(link.peer())) {
            LOG.info("member {}: {} answered as member '{}' of group '{}'{}, not as {} of {}", transport.member(),
                    ctx.channel().remoteAddress(), LogText.escape(w.member()), LogText.escape(w.group()),
                    certified == null ? "" : " (certificate '" + LogText.escape(certified) + "')", link.peer(),
                    transport.group());
            return false;
        }
        byte[] server = Handshake.transcript(Handshake.Role.SERVER, transport.group(), transport.member(), link.peer(),
                nonce, w.nonce());
        if (!transport.keys().keyOf(link.peer()).map(k -> k.verifies(server, w.signature())).orElse(false)) {
            LOG.info("member {}: {} at {} did not prove it is {} (its signature is not made with the key this member "
                    + "holds for it)", transport.member(), link.peer(), ctx.channel().remoteAddress(), link.peer());
            return false;
        }
        ByteBuf proof = ctx.alloc().buffer(80);
        Frames.writeProof(proof, transport.keys().own().sign(Handshake.transcript(Handshake.Role.CLIENT,
                transport.group(), transport.member(), link.peer(), nonce, w.nonce())));
        ctx.writeAndFlush(proof, ctx.voidPromise());
        welcomed = true;
        // scheduled in channelActive, which comes before any read
        Objects.requireNonNull(timeout, "the handshake timeout").cancel(false);
        link.welcomed(this, ctx.channel());
        return true;
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (welcomed && ctx.channel().isWritable()) {
            link.scheduleDrain();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (timeout != null) {
            timeout.cancel(false);
        }
        link.lost(this, welcomed);
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("member {}: connection to {} at {} failed: {}", transport.member(), link.peer(),
                ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }
}
