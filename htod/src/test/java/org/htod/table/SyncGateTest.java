package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.htod.core.container.ContainerConfig;
import org.htod.core.device.MemoryDevice;
import org.htod.core.storage.Storage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What waits in the gate stays bounded, whatever the operations: puts, removals, replacements. */
class SyncGateTest {
    private static final int LIMIT = 16;
    private TableStore ts;
    private HashtableOnDisk t;

    @BeforeEach
    void open() {
        ts = TableStore.open(Storage.create(new MemoryDevice(), ContainerConfig.builder().grain(64).logSize(0).build()),
                TableOptions.defaults().withClock(() -> 0L).withCacheBytes(0).withMaxPendingLinks(LIMIT));
        t = ts.table("g", true);
    }

    @AfterEach
    void close() {
        ts.close();
    }

    private static byte[] key(int i) {
        return ("k" + i).getBytes(StandardCharsets.UTF_8);
    }

    /** Each operation sets one link (and a removal or replacement retires one block). */
    private void assertBounded(String what) {
        assertTrue(ts.gate().queued() < LIMIT, what + ": " + ts.gate().queued() + " links and blocks wait");
    }

    @Test
    void removalsAloneAreFlushed() {
        for (int i = 0; i < 40; i++) {
            t.update(key(i), cur -> Change.put(new byte[] {1}, 0));
        }
        ts.sync();
        long syncs = ts.syncCount();
        for (int i = 0; i < 40; i++) {
            t.update(key(i), cur -> Change.REMOVE);
            assertBounded("removal " + i);
        }
        assertTrue(ts.syncCount() > syncs, "forty removals flushed at least once");
        for (int i = 0; i < 40; i++) {
            assertNull(t.get(key(i)));
        }
        assertEquals(0, t.size());
    }

    @Test
    void replacementsOfOneKeyAreFlushed() {
        // one slot, rewritten again and again: one waiting link, but a retired block per replacement
        for (int i = 0; i < 100; i++) {
            byte[] v = {(byte) i};
            t.update(key(0), cur -> Change.put(v, 0));
            assertBounded("replacement " + i);
        }
        assertEquals(99, t.get(key(0)).value()[0]);
        ts.verify(true);
    }
}
