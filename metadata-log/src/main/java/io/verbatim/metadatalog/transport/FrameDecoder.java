package io.verbatim.metadatalog.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;

/**
 * Length-prefixed frames, the length stripped: each frame passed on is its kind byte and body. Until
 * {@link #open} only a handshake's size is accepted, so a peer that has not authenticated cannot make the
 * server hold a large frame; after it, up to {@code maxFrameBytes}, the 4-byte length included.
 */
final class FrameDecoder extends LengthFieldBasedFrameDecoder {
    private long limit = Frames.MAX_HANDSHAKE_BYTES;
    private final int maxFrameBytes;

    FrameDecoder(int maxFrameBytes) {
        super(maxFrameBytes, 0, 4, 0, 4, true);
        this.maxFrameBytes = maxFrameBytes;
    }

    /** The handshake passed: frames up to the configured size from now on (called on the event loop). */
    void open() {
        limit = maxFrameBytes;
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        if (in.readableBytes() >= 4) {
            long frame = in.getUnsignedInt(in.readerIndex()) + 4;
            if (frame > limit) {
                throw new TooLongFrameException("a frame of " + frame + " bytes is above " + limit);
            }
        }
        return super.decode(ctx, in);
    }
}
