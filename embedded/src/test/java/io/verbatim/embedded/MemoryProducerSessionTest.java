package io.verbatim.embedded;

import io.verbatim.model.Layout;
import io.verbatim.model.entry.Entry;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.ProducerSessionContract;
import io.verbatim.pipeline.StoredEntry;
import java.util.List;
import reactor.core.scheduler.Schedulers;

/** The in-memory cluster's sessions pass the producer session contract. */
class MemoryProducerSessionTest extends ProducerSessionContract {

    @Override
    protected Destination newDestination() {
        MemorySegments cluster = new MemorySegments("west", Layout.initial(1, 1, 0), Schedulers.immediate());
        return new Destination() {
            @Override
            public ProducerSession open(String producerName) {
                return cluster.asRemote().open(0, producerName);
            }

            @Override
            public List<Entry> stored() {
                return cluster.log(0).entries().stream().map(StoredEntry::bytes).map(Entry::parse).toList();
            }

            @Override
            public void seal() {
                cluster.log(0).seal();
            }
        };
    }
}
