package io.verbatim.metadatalog.state;

import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The segments' ownership and the broker members as one member of the metadata log has applied them: an
 * immutable copy, taken after each change.
 *
 * @param epoch the index of the last entry that changed it (0: nothing yet)
 * @param segments every segment with an ownership record, sorted (a segment of a layout without one was
 *        never assigned: unowned)
 * @param members every registered member, sorted by id
 */
public record OwnershipTable(long epoch, SortedMap<SegmentKey, SegmentOwner> segments,
        SortedMap<String, RegisteredMember> members) {
    /** Nothing owned, nobody registered. */
    public static final OwnershipTable EMPTY = new OwnershipTable(0, new TreeMap<>(), new TreeMap<>());

    public OwnershipTable {
        segments = Collections.unmodifiableSortedMap(new TreeMap<>(segments));
        members = Collections.unmodifiableSortedMap(new TreeMap<>(members));
    }

    /** The segment's ownership; empty when it was never assigned. */
    public Optional<SegmentOwner> of(SegmentKey segment) {
        return Optional.ofNullable(segments.get(segment));
    }

    /** The segments {@code member} owns and acts on (its lease holding), sorted. */
    public List<SegmentKey> ownedBy(String member) {
        return segments.values().stream().filter(o -> o.ownedBy(member)).map(SegmentOwner::segment).toList();
    }

    /** The members that take segments, sorted. */
    public List<String> activeMembers() {
        return members.values().stream().filter(m -> m.state() == RegisteredMember.State.ACTIVE)
                .map(RegisteredMember::id).toList();
    }

    /** The member's record. */
    public Optional<RegisteredMember> member(String id) {
        return Optional.ofNullable(members.get(id));
    }
}
