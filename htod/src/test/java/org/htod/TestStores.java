package org.htod;

import org.htod.core.device.BlockDevice;
import org.htod.core.device.MemoryDevice;

/** Stores on memory devices for tests, and the verifier hook. */
final class TestStores {
    private TestStores() {}

    static int scale() {
        return Integer.getInteger("htod.test.scale", 1);
    }

    /** A builder with a small grain and no log region, fit for many small stores. */
    static Htod.Builder small(BlockDevice dev) {
        return Htod.builder(dev).grain(64).logSize(0).durability(Durability.NONE);
    }

    static HtodStore memory() {
        return small(new MemoryDevice()).open();
    }

    /** Verifies every table of {@code store}: chains, CRCs, counts and no leaked block. */
    static void verify(HtodStore store) {
        store.verify();
    }
}
