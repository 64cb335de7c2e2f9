package io.verbatim.metadatalog.raft;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Scripted scenarios whose every delivered message is compared, line by line, with a checked-in
 * transcript under {@code src/test/resources/raft/}, so a change of the protocol's behaviour shows as a
 * diff. {@code -Dverbatim.golden.update=true} rewrites the files (then review the diff).
 */
class RaftGoldenTranscriptTest {
    private static final Path DIR = Path.of("src/test/resources/raft");

    @Test
    void threeVotersAndAListenerElectProposeAndCommit() throws IOException {
        Harness h = Harness.group(List.of("n1", "n2", "n3"), List.of("l1"));
        h.elect("n1");
        h.propose("n1", "x");
        h.deliver();
        h.run(1);
        compare("election-proposal-commit.txt", h.transcript);
    }

    @Test
    void aLaggingListenerIsProbedAndCaughtUpWithAHint() throws IOException {
        Harness h = Harness.group(List.of("n1", "n2", "n3"), List.of("l1"));
        h.elect("n1");
        h.isolated.add("l1");
        h.propose("n1", "a");
        h.propose("n1", "b");
        h.deliver();
        h.isolated.clear();
        h.transcript.clear();
        h.run(2);
        compare("listener-catch-up.txt", h.transcript);
    }

    private static void compare(String name, List<String> transcript) throws IOException {
        Path file = DIR.resolve(name);
        String actual = String.join("\n", transcript) + "\n";
        if (Boolean.getBoolean("verbatim.golden.update")) {
            Files.createDirectories(DIR);
            Files.writeString(file, actual, StandardCharsets.UTF_8);
        }
        assertThat(Files.exists(file)).as(file + " exists (run with -Dverbatim.golden.update=true to create it)").isTrue();
        assertThat(actual).isEqualTo(Files.readString(file, StandardCharsets.UTF_8));
    }
}
