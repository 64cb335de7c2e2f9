package io.verbatim.metadatalog.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.metadatalog.state.LayoutRegister;
import io.verbatim.metadatalog.storage.RaftStorage;
import io.verbatim.model.Layout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A group on disk: stopped whole and started again, it holds every committed layout, epochs included. */
class RaftServerRestartTest {
    @TempDir
    Path dir;

    private void startOnDisk(RaftServerTest group, String member) {
        LayoutRegister register = new LayoutRegister();
        group.servers.put(member, RaftServerTest.fast(member)
                .group(Group.of(RaftServerTest.VOTERS, RaftServerTest.LISTENERS))
                .storage(RaftStorage.open(dir.resolve(member))).transport(group.network.join(member)).machine(register)
                .scheduler(group.thread(member)).seed(member.hashCode()).start());
        group.registers.put(member, register);
    }

    @Test
    void aGroupStoppedAndStartedFromItsDisksKeepsEveryCommittedLayoutPastSnapshots() {
        Layout latest = Layout.initial(1, 4, 0);
        RaftServerTest first = new RaftServerTest();
        try {
            RaftServerTest.VOTERS.forEach(m -> startOnDisk(first, m));
            first.awaitLeader();
            LayoutStore store = first.leaderStore("c1");
            store.create("t", latest).block(Duration.ofSeconds(10));
            for (int i = 0; i < 120; i++) { // more than two snapshots' worth (every 50 applied entries)
                latest = store.compareAndSet("t", latest.epoch(), RaftServerTest.split(latest))
                        .block(Duration.ofSeconds(10));
            }
        } finally {
            first.stop();
        }
        for (String m : RaftServerTest.VOTERS) {
            try (var files = Files.list(dir.resolve(m))) {
                assertThat(files.map(f -> f.getFileName().toString())).as(m).anyMatch(f -> f.startsWith("snapshot_"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        RaftServerTest second = new RaftServerTest();
        try {
            RaftServerTest.VOTERS.forEach(m -> startOnDisk(second, m));
            second.awaitLeader();
            LayoutStore store = second.leaderStore("c2");
            assertThat(store.get("t").block(Duration.ofSeconds(10))).isEqualTo(latest);
            assertThat(latest.epoch()).isEqualTo(120);
            Layout next = store.compareAndSet("t", 120, RaftServerTest.split(latest)).block(Duration.ofSeconds(10));
            assertThat(store.watch("t").filter(l -> l.epoch() == 121).blockFirst(Duration.ofSeconds(10))).isEqualTo(next);
        } finally {
            second.stop();
        }
    }
}
