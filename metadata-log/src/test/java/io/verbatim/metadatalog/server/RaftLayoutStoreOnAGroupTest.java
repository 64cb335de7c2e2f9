package io.verbatim.metadatalog.server;

import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.layoutstore.LayoutStoreContract;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.raft.RaftStatus;
import io.verbatim.metadatalog.state.LeaderLayoutStore;
import io.verbatim.metadatalog.state.RaftLayoutStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import reactor.core.scheduler.Schedulers;

/**
 * The layout store contract on a group of three voters and two listeners, through whichever member leads
 * (leadership may move while the machine is loaded) and watching from a listener.
 */
class RaftLayoutStoreOnAGroupTest extends LayoutStoreContract {
    private final List<RaftServerTest> groups = new ArrayList<>();

    @Override
    protected LayoutStore newStore() {
        RaftServerTest group = new RaftServerTest();
        groups.add(group);
        RaftServerTest.VOTERS.forEach(group::start);
        RaftServerTest.LISTENERS.forEach(group::start);
        group.awaitLeader();
        Map<String, RaftLayoutStore> stores = new LinkedHashMap<>();
        group.servers.keySet().forEach(m -> stores.put(m, group.store(m)));
        Supplier<Optional<String>> leader = () -> group.servers.values().stream().map(RaftServer::status)
                .filter(s -> s.role() == RaftPeerRole.LEADER).map(RaftStatus::memberId).findFirst();
        return new LeaderLayoutStore(stores, leader, "b1", Duration.ofSeconds(10), Schedulers.parallel());
    }

    @AfterEach
    void stopGroups() {
        groups.forEach(RaftServerTest::stop);
    }
}
