package io.verbatim.store;

class InMemoryLayoutStoreTest extends LayoutStoreContract {
    @Override
    protected LayoutStore newStore() {
        return new InMemoryLayoutStore();
    }
}
