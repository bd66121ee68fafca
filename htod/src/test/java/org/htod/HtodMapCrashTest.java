package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.htod.core.HtodException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * Power loss through the public API, for each storage method at each durability: a store on a
 * {@code CrashDevice} runs puts, replaces, removes, compute and putAll (and, below SYNC, explicit
 * syncs) until power fails at a seeded write or sync (the write at the cut may land), the crash
 * keeps a random subset of the unsynced writes, and the store reopened on what survived must hold,
 * for every key, a value it may hold: with SYNC the value of the last operation that returned, or
 * of the one in flight; with ASYNC and NONE any value written since the last {@code sync()} that
 * returned (the background syncs of ASYNC only make more of them durable). Then iteration agrees
 * with lookups and the size, and the store verifies. The crashed store is not verified, the one
 * reopened is.
 */
class HtodMapCrashTest {
    private static final int KEYS = 150;

    @Test
    void acknowledgedWritesSurvivePowerLoss() {
        int points = 450 * TestStores.scale();
        Map<String, Integer> perConfig = new TreeMap<>();
        for (int i = 0; i < points; i++) {
            long seed = 0xA11CE000L + i;
            try {
                perConfig.merge(point(seed), 1, Integer::sum);
            } catch (Throwable e) {
                throw new AssertionError("seed=" + seed + ": " + e, e);
            }
        }
        System.out.println(points + " crash points through the map API: " + perConfig);
        assertEquals(9, perConfig.size(), "every storage method at every durability: " + perConfig);
    }

    /** What each key may hold after a crash; see the class comment. */
    private static final class Model extends PossibleValues {
        final boolean syncEach;

        Model(Durability d) {
            this.syncEach = d == Durability.SYNC;
        }

        /** The operation returned: with SYNC its effect is durable. */
        void done() {
            if (syncEach) {
                since.clear();
            }
        }

        void synced() {
            since.clear();
        }
    }

    /** One crash point; returns its storage method and durability. */
    private static String point(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        StorageMethod method = StorageMethod.values()[(int) (seed % 3)];
        Durability durability = Durability.values()[(int) (seed / 3 % 3)];
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        // hash keys from the seed too, so that a seed replays the buckets and the writes it met
        HtodStore store = TestStores.small(dev).hashKeySeed(seed).storageMethod(method).durability(durability)
                .syncInterval(Duration.ofMillis(2)).open();
        HtodMap<String, String> m = store.map("crash", Codec.string(), Codec.string());
        dev.armPowerCut(1 + r.nextInt(1500), Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
        Model model = new Model(durability);
        try {
            for (int op = 0; ; op++) {
                String k = "k" + r.nextInt(KEYS);
                String v = "v" + op + "-" + "x".repeat(r.nextInt(4) == 0 ? 700 : 3);
                int kind = r.nextInt(durability == Durability.SYNC ? 10 : 11);
                if (kind < 4) {
                    model.begin(k, v);
                    m.put(k, v);
                    model.acked(k, v);
                } else if (kind < 6) {
                    model.begin(k, null);
                    m.remove(k);
                    model.acked(k, null);
                } else if (kind < 7) {
                    String before = model.acked.get(k);
                    if (before != null) {
                        model.begin(k, v);
                    }
                    String replaced = m.replace(k, v);
                    if (!Objects.equals(before, replaced)) {
                        throw new AssertionError("replace of " + k + " found " + replaced + ", expected " + before);
                    }
                    if (replaced != null) {
                        model.acked(k, v);
                    }
                } else if (kind < 8) {
                    String old = model.acked.get(k);
                    String nv = old == null || old.length() >= 50 ? "c" : old + "c";
                    model.begin(k, nv);
                    m.compute(k, (key, o) -> o == null || o.length() >= 50 ? "c" : o + "c");
                    model.acked(k, nv);
                } else if (kind < 10) {
                    Map<String, String> batch = new HashMap<>();
                    for (int i = 0; i < 10; i++) {
                        batch.put("k" + r.nextInt(KEYS), v + i);
                    }
                    batch.forEach(model::begin);
                    m.putAll(batch);
                    batch.forEach(model::acked);
                } else {
                    store.sync();
                    model.synced();
                }
                model.done();
            }
        } catch (HtodException e) {
            // Power lost in the middle of the operation whose keys model.since holds: the device's
            // own error, or with ASYNC the store's refusal after its background sync met the cut.
            if (!dev.powerCut()) {
                throw e;
            }
        }
        dev.crash(seed);
        try {
            store.close(); // stops the background sync of ASYNC; the crashed device refuses the rest
        } catch (HtodException expected) {
            // the device is gone: nothing of the close reaches it
        }
        try (HtodStore again = TestStores.small(disk.reopen()).open()) {
            assertTrue(!again.recoveryReport().clean());
            TestStores.verify(again);
            model.check(again.map("crash", Codec.string(), Codec.string()), KEYS, method + ", " + durability);
        }
        return method + "/" + durability;
    }
}
