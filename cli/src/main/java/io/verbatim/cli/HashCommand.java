package io.verbatim.cli;

import io.verbatim.model.Buckets;
import io.verbatim.model.KeyHash;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code verbatim hash}: where Pulsar's routing hash puts a key (segment hash, hashB, bucket per count). */
@Command(name = "hash", mixinStandardHelpOptions = true,
        description = "Pulsar's routing hash of a key: Murmur3_32, segment hash (high 16 bits), hashB (low 16 "
                + "bits) and the entry bucket for each bucket count.")
final class HashCommand implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "KEY", description = "the message key (UTF-8)")
    String key;

    @Option(names = {"-n", "--buckets"}, split = ",", paramLabel = "N",
            description = "bucket counts to place hashB in (default 1,2,4,8,16)")
    @Nullable List<Integer> buckets;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        KeyHash h = KeyHash.of(key);
        out.printf("key          %s%n", key);
        out.printf("murmur3_32   0x%08x (%d)%n", h.raw(), Integer.toUnsignedLong(h.raw()));
        out.printf("segment hash 0x%04x (%d)%n", h.segmentHash(), h.segmentHash());
        out.printf("hashB        0x%04x (%d)%n", h.hashB(), h.hashB());
        for (int n : buckets == null ? List.of(1, 2, 4, 8, 16) : buckets) {
            Buckets b;
            try {
                b = Buckets.of(n);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--buckets " + n + ": " + e.getMessage());
            }
            int i = b.bucketOf(h.hashB());
            out.printf("N=%-5d      bucket %d %s%n", n, i, b.range(i).toHexString());
        }
        return 0;
    }
}
