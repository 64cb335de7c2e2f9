package io.verbatim.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code verbatim node} refuses what it cannot run, naming why, with exit code 2 and nothing started. */
class NodeCommandTest {
    @TempDir
    Path dir;

    private Path config(String yaml) throws Exception {
        Path file = dir.resolve("nodes.yaml");
        Files.writeString(file, yaml);
        return file;
    }

    @Test
    void anUnknownClusterIsNamedWithTheOnesTheFileHas() throws Exception {
        Path file = config("clusters: [{name: a, token: ta, adminPort: 18081, brokerPorts: [18082]}, "
                + "{name: b, token: tb, adminPort: 18083, brokerPorts: [18084]}]\n");
        VerbatimCliTest.Run r = VerbatimCliTest.run("node", "--config", file.toString(), "--cluster", "c");
        assertThat(r.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(r.err()).contains("--cluster c is not a cluster of").contains("[a, b]");
    }

    @Test
    void aClusterWithControllerReplicasOfTheirOwnNeedsAMemberAndOnlyItsOwn() throws Exception {
        Path file = config("clusters:\n"
                + "  - {name: a, token: ta, adminPort: 18081, brokerPorts: [18082], raftPort: 18085,\n"
                + "     controllers: [{id: c1, adminPort: 18086, raftPort: 18087}]}\n"
                + "  - {name: b, token: tb, adminPort: 18083, brokerPorts: [18084]}\n");
        VerbatimCliTest.Run none = VerbatimCliTest.run("node", "--config", file.toString(), "--cluster", "a");
        assertThat(none.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(none.err()).contains("clusters[0] (a) runs its controller replicas as processes of their own")
                .contains("--member c1").contains("--member brokers");
        VerbatimCliTest.Run unknown = VerbatimCliTest.run("node", "--config", file.toString(), "--cluster", "a",
                "--member", "c9");
        assertThat(unknown.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(unknown.err()).contains("--member c9 is not a member of a").contains("[c1]");
        VerbatimCliTest.Run noDisk = VerbatimCliTest.run("node", "--config", file.toString(), "--cluster", "a",
                "--member", "c1");
        assertThat(noDisk.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(noDisk.err()).contains("--member c1 is a voter of a's metadata log: it needs a data directory");
        VerbatimCliTest.Run noSecret = VerbatimCliTest.run("node", "--config", file.toString(), "--cluster", "a",
                "--member", "c1", "--data-dir", dir.resolve("c1").toString());
        assertThat(noSecret.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(noSecret.err()).contains("clusters[0].controllers[0].secret: is missing")
                .contains("proves who it is with a secret of its own");
        VerbatimCliTest.Run notSplit = VerbatimCliTest.run("node", "--config", file.toString(), "--cluster", "b",
                "--member", "brokers");
        assertThat(notSplit.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(notSplit.err()).contains("clusters[1] (b) names no controllers");
    }

    @Test
    void aClusterWithBrokerMembersStartsEachAsAMemberOfItsOwn() throws Exception {
        Path file = config("clusters:\n"
                + "  - {name: a, token: ta, controllers: [{id: c1, adminPort: 18086, raftPort: 18087}],\n"
                + "     brokerMembers: [{id: broker-1, adminPort: 18081, brokerPorts: [18082], raftPort: 18085}]}\n"
                + "  - {name: b, token: tb, adminPort: 18083, brokerPorts: [18084]}\n");
        VerbatimCliTest.Run none = VerbatimCliTest.run("node", "--config", file.toString(), "--cluster", "a");
        assertThat(none.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(none.err()).contains("--member c1, and its broker processes with --member broker-1");
        VerbatimCliTest.Run single = VerbatimCliTest.run("node", "--config", file.toString(), "--cluster", "a",
                "--member", "brokers");
        assertThat(single.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(single.err()).contains("--member brokers is not a member of a (it has controller replicas [c1] and "
                + "broker members [broker-1])");
        VerbatimCliTest.Run noSecret = VerbatimCliTest.run("node", "--config", file.toString(), "--cluster", "a",
                "--member", "broker-1");
        assertThat(noSecret.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(noSecret.err()).contains("clusters[0].controllers[0].secret: is missing");
    }

    @Test
    void aPortPickedAtStartIsRefusedForANode() throws Exception {
        Path file = config("clusters: [{name: a, token: ta, adminPort: 18081, brokerPorts: [18082]}, {name: b, token: tb}]\n"
                + "");
        VerbatimCliTest.Run r = VerbatimCliTest.run("node", "--config", file.toString(), "--cluster", "a");
        assertThat(r.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(r.err()).contains("clusters[1] (b)").contains("adminPort and brokerPorts named");
    }

    @Test
    void aBadFileOrDurationIsNamed() throws Exception {
        VerbatimCliTest.Run missing = VerbatimCliTest.run("node", "--config", dir.resolve("none.yaml").toString(),
                "--cluster", "a");
        assertThat(missing.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(missing.err()).contains("does not exist");
        VerbatimCliTest.Run zero = VerbatimCliTest.run("node", "--config", "/dev/zero", "--cluster", "a");
        assertThat(zero.code()).as("read up to the limit, not until memory runs out").isEqualTo(Verbatim.BAD_INPUT);
        assertThat(zero.err()).contains("file /dev/zero is more than 1048576 bytes long");
        Path file = config("clusters: [{name: a, token: ta, adminPort: 18081, brokerPorts: [18082]}, "
                + "{name: b, token: tb, adminPort: 18083, brokerPorts: [18084]}]\n");
        VerbatimCliTest.Run drain = VerbatimCliTest.run("node", "--config", file.toString(), "--cluster", "a",
                "--drain-timeout", "soon");
        assertThat(drain.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(drain.err()).contains("--drain-timeout");
    }
}
