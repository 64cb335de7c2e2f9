package io.verbatim.metadatalog.transport;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;

/**
 * What each side of a connection signs ({@link Frames}): a label, its role, the group, the client's and the
 * server's member ids, and both nonces. Each side draws its nonce afresh for every connection, so a signature
 * answers one connection's challenge only: a recorded handshake replayed fails, as the other side's nonce is
 * new; the role keeps a server's signature from passing for a client's. Every part is length-prefixed, so no
 * two transcripts read alike.
 */
final class Handshake {
    private static final byte[] LABEL = "verbatim-raft-handshake/v2".getBytes(StandardCharsets.UTF_8);
    private static final SecureRandom RANDOM = new SecureRandom();

    enum Role { CLIENT, SERVER }

    private Handshake() {
    }

    /** A fresh nonce. */
    static byte[] nonce() {
        byte[] n = new byte[Frames.NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    /** What {@code role} signs on a connection of {@code client} to {@code server}, in {@code group}. */
    static byte[] transcript(Role role, String group, String client, String server, byte[] clientNonce,
            byte[] serverNonce) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(160);
        part(out, LABEL);
        part(out, role.name().getBytes(StandardCharsets.UTF_8));
        part(out, group.getBytes(StandardCharsets.UTF_8));
        part(out, client.getBytes(StandardCharsets.UTF_8));
        part(out, server.getBytes(StandardCharsets.UTF_8));
        part(out, clientNonce);
        part(out, serverNonce);
        return out.toByteArray();
    }

    private static void part(ByteArrayOutputStream out, byte[] b) {
        out.write(b.length >>> 8);
        out.write(b.length);
        out.writeBytes(b);
    }
}
