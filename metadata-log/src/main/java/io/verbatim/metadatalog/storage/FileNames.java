package io.verbatim.metadatalog.storage;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The names in a log directory: {@code log_inprogress_<first>.seg} (the open segment),
 * {@code log_<first>-<last>.seg} (a closed one), {@code snapshot_<term>_<index>}, {@code hardstate},
 * {@code lock}; anything ending in {@code .tmp} is an unfinished write.
 */
final class FileNames {
    static final String HARD_STATE = "hardstate";
    static final String LOCK = "lock";
    static final String TMP_SUFFIX = ".tmp";

    private static final Pattern OPEN = Pattern.compile("log_inprogress_(\\d+)\\.seg");
    private static final Pattern CLOSED = Pattern.compile("log_(\\d+)-(\\d+)\\.seg");
    private static final Pattern SNAPSHOT = Pattern.compile("snapshot_(\\d+)_(\\d+)");

    private FileNames() {
    }

    /** A segment's name: its first index, its last (-1 while open). */
    record SegmentName(long first, long last) {
        boolean open() {
            return last < 0;
        }
    }

    record SnapshotName(long term, long index) {
    }

    static String openSegment(long first) {
        return "log_inprogress_" + first + ".seg";
    }

    static String closedSegment(long first, long last) {
        return "log_" + first + "-" + last + ".seg";
    }

    static String snapshot(long term, long index) {
        return "snapshot_" + term + "_" + index;
    }

    static Optional<SegmentName> parseSegment(String name) {
        Matcher open = OPEN.matcher(name);
        if (open.matches()) {
            return Optional.of(new SegmentName(Long.parseLong(open.group(1)), -1));
        }
        Matcher closed = CLOSED.matcher(name);
        return closed.matches()
                ? Optional.of(new SegmentName(Long.parseLong(closed.group(1)), Long.parseLong(closed.group(2))))
                : Optional.empty();
    }

    static Optional<SnapshotName> parseSnapshot(String name) {
        Matcher m = SNAPSHOT.matcher(name);
        return m.matches()
                ? Optional.of(new SnapshotName(Long.parseLong(m.group(1)), Long.parseLong(m.group(2))))
                : Optional.empty();
    }
}
