package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.htod.core.HtodException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A store whose device failed a sync and refuses every sync since, as a file device does (a
 * failed sync may have lost writes made before it, and Linux reports that once): its writes are
 * refused from then on, without hanging, reads go on, {@code close()} closes it (without a clean
 * shutdown), and the store opened again holds every change a sync made durable before the
 * failure, and verifies. Retried, as a failed sync was before, an install or a relog would have
 * named data that the disk may not hold.
 */
class FailedSyncStoreTest {
    @ParameterizedTest(name = "direct mode {0}, {1}")
    @CsvSource({"false, SYNC", "false, ASYNC", "false, NONE", "true, SYNC", "true, NONE"})
    void aStoreWhoseSyncFailedRefusesChangesAndOpensAgainWithWhatWasDurable(boolean direct, Durability durability) {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice crash = new CrashDevice(disk);
        FaultyDevice dev = new FaultyDevice(crash);
        HtodStore s = TestStores.small(dev).directMode(direct).durability(durability).open();
        HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
        for (int i = 0; i < 200; i++) {
            m.put("k" + i, "v" + i);
        }
        s.sync(); // durable: these must survive
        dev.failSyncLatching(1); // as a file device: every sync after it refused
        int refused = 0;
        for (int i = 0; i < 200; i++) {
            try {
                m.put("k" + i, "w" + i);
                s.sync();
            } catch (HtodException e) {
                refused++;
            }
        }
        assertTrue(dev.faultsRaised() > 0, "the armed sync failure came");
        assertTrue(refused > 190, "changes after the failure refused: " + refused + " of 200");
        for (int i = 0; i < 200; i++) {
            String v = m.get("k" + i);
            assertTrue(("v" + i).equals(v) || ("w" + i).equals(v), "k" + i + " reads " + v);
        }
        try {
            s.close();
        } catch (HtodException e) {
            // closed without a clean shutdown: the next open recovers
        }
        assertThrows(org.htod.core.StoreClosedException.class, () -> m.get("k0"), "the store is closed");
        crash.crashKeeping(at -> false); // nothing the failed syncs did not make durable
        try (HtodStore again = TestStores.small(disk.reopen()).directMode(direct).open()) {
            HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 200; i++) {
                String v = r.get("k" + i);
                assertTrue(("v" + i).equals(v) || ("w" + i).equals(v), "k" + i + " holds " + v + " after the reopen");
            }
            assertEquals(200, r.size());
            TestStores.verify(again);
        }
    }
}
