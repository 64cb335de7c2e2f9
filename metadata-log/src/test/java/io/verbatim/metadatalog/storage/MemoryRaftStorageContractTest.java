package io.verbatim.metadatalog.storage;

import java.util.random.RandomGenerator;

class MemoryRaftStorageContractTest extends RaftStorageContract {

    @Override
    protected RaftStorage create() {
        return new MemoryRaftStorage();
    }

    @Override
    protected RaftStorage reopen(RaftStorage closed) {
        return ((MemoryRaftStorage) closed).crash();
    }

    @Override
    protected RaftStorage crash(RaftStorage storage) {
        return ((MemoryRaftStorage) storage).crash();
    }

    @Override
    protected RaftStorage crashTorn(RaftStorage storage, RandomGenerator random) {
        return ((MemoryRaftStorage) storage).crash(random);
    }
}
