package io.verbatim.runtime.controller;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The controller leader's book of its broker members' leases: when it last heard each (a report whose read
 * barrier confirmed it still leads), and which it is expiring. A member it has not heard from for a lease
 * is expired; a member it is expiring gets no new lease until the expiry committed or was lost (else a
 * member could act on segments the expiry is giving away). Leases are not carried across a change of leader:
 * a new leader counts every member as heard when it took over, so it expires nobody within a lease of
 * taking over. Pure: times are passed in (the leader's monotonic clock, in milliseconds).
 */
public final class LeaseBook {
    private final long lengthMs;
    private final long takeoverMs;
    private final Map<String, Long> heard = new TreeMap<>();
    private final Set<String> expiring = new TreeSet<>();

    /**
     * @param length the lease length, as the members count it
     * @param takeoverMs when this leader took over
     */
    public LeaseBook(Duration length, long takeoverMs) {
        this.lengthMs = length.toMillis();
        this.takeoverMs = takeoverMs;
    }

    /**
     * A report of {@code member} received at {@code receivedMs}, its barrier confirmed: whether it gets a lease
     * (not while its expiry is being committed).
     */
    public boolean heard(String member, long receivedMs) {
        if (expiring.contains(member)) {
            return false;
        }
        heard.merge(member, receivedMs, Math::max);
        return true;
    }

    private long lastHeard(String member) {
        return heard.getOrDefault(member, takeoverMs);
    }

    /** Whether {@code member}'s lease holds at {@code nowMs} (and it is not being expired). */
    public boolean live(String member, long nowMs) {
        return !expiring.contains(member) && nowMs - lastHeard(member) <= lengthMs;
    }

    /** Of {@code members}, those whose lease ran out at {@code nowMs}, sorted. */
    public List<String> lapsed(Collection<String> members, long nowMs) {
        List<String> out = new ArrayList<>();
        for (String m : new TreeSet<>(members)) {
            if (nowMs - lastHeard(m) > lengthMs) {
                out.add(m);
            }
        }
        return out;
    }

    /** The expiry of {@code member} is proposed: it gets no lease until {@link #settled}. */
    public void expiring(String member) {
        expiring.add(member);
    }

    /** The members being expired, sorted. */
    public List<String> expiring() {
        return List.copyOf(expiring);
    }

    /** The expiry of {@code member} committed or was lost: its next report may get a lease again. */
    public void settled(String member) {
        expiring.remove(member);
    }
}
