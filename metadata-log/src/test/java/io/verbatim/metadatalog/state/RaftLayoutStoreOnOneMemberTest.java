package io.verbatim.metadatalog.state;

import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.layoutstore.LayoutStoreContract;

/** The register and the store's mapping of outcomes, through the same contract as the in-memory store. */
class RaftLayoutStoreOnOneMemberTest extends LayoutStoreContract {
    @Override
    protected LayoutStore newStore() {
        LayoutRegister register = new LayoutRegister();
        return new RaftLayoutStore(new DirectLog(register), register);
    }
}
