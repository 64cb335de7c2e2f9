package io.verbatim.layoutstore;

class InMemoryLayoutStoreTest extends LayoutStoreContract {
    @Override
    protected LayoutStore newStore() {
        return new InMemoryLayoutStore();
    }
}
