package io.verbatim.net;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * The nonces of the signed calls each cluster made within the signature window, so that a call is taken
 * once. A nonce is kept until its call's time of issue leaves the window (it could not pass the time check
 * after that), and each caller holds at most {@code maxPerCaller}: a caller over it is refused until older
 * calls leave the window — memory stays bounded, and no call is ever taken unchecked. Only calls whose
 * signature verified are recorded, so only a configured cluster spends its own share.
 *
 * <p>Time is what the caller of {@link #admit} passes; the latest time seen is kept, so that a clock that
 * steps back cannot bring back a call whose nonce was already forgotten.
 */
final class ReplayCache {
    private final int maxPerCaller;
    private final long windowMs;
    private final Map<String, Seen> byCaller = new HashMap<>();
    private long latestMs = Long.MIN_VALUE;

    /** What {@link #admit} decided. */
    sealed interface Admission {
        /** First seen: recorded. */
        record Fresh() implements Admission {
        }

        /** Seen before within the window. */
        record Replayed() implements Admission {
        }

        /** The caller holds {@code max} nonces already, every one still inside the window. */
        record Full(int max) implements Admission {
        }

        /** Issued before the window as the latest time seen has it (this node's clock stepped back). */
        record Forgotten(long latestMs) implements Admission {
        }
    }

    ReplayCache(int maxPerCaller, long windowMs) {
        if (maxPerCaller < 1) {
            throw new IllegalArgumentException("maxPerCaller is " + maxPerCaller + ": must be at least 1");
        }
        if (windowMs < 0) {
            throw new IllegalArgumentException("windowMs is " + windowMs + ": must be at least 0");
        }
        this.maxPerCaller = maxPerCaller;
        this.windowMs = windowMs;
    }

    /** Records {@code nonce} of {@code caller}'s call issued at {@code issuedMs}, unless seen or over the bound. */
    synchronized Admission admit(String caller, String nonce, long issuedMs, long nowMs) {
        latestMs = Math.max(latestMs, nowMs);
        if (issuedMs + windowMs < latestMs) {
            return new Admission.Forgotten(latestMs);
        }
        Seen seen = byCaller.computeIfAbsent(caller, c -> new Seen());
        seen.forgetBefore(latestMs);
        Nonce n = Nonce.of(nonce);
        if (seen.nonces.contains(n)) {
            return new Admission.Replayed();
        }
        if (seen.nonces.size() >= maxPerCaller) {
            return new Admission.Full(maxPerCaller);
        }
        seen.nonces.add(n);
        seen.byExpiry.add(new Expiring(issuedMs + windowMs, n));
        return new Admission.Fresh();
    }

    /** How many nonces {@code caller} holds now (without forgetting any). */
    synchronized int held(String caller) {
        Seen seen = byCaller.get(caller);
        return seen == null ? 0 : seen.nonces.size();
    }

    /** 128 bits as two longs: a third of the memory of its 32 hex digits as a string. */
    private record Nonce(long high, long low) {
        static Nonce of(String hex) {
            return new Nonce(Long.parseUnsignedLong(hex.substring(0, 16), 16), Long.parseUnsignedLong(hex.substring(16), 16));
        }
    }

    private record Expiring(long expiresMs, Nonce nonce) {
    }

    private static final class Seen {
        final Set<Nonce> nonces = new HashSet<>();
        final PriorityQueue<Expiring> byExpiry = new PriorityQueue<>((a, b) -> Long.compare(a.expiresMs, b.expiresMs));

        void forgetBefore(long nowMs) {
            while (!byExpiry.isEmpty() && byExpiry.peek().expiresMs < nowMs) {
                nonces.remove(byExpiry.poll().nonce);
            }
        }
    }
}
