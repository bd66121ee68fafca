package org.htod;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.htod.core.HtodException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.mob.LoggedOpen;
import org.junit.jupiter.api.Test;

/**
 * Log mode at SYNC with three maps that double at once in steps of a few buckets, over a small
 * log: puts, removes, clears and checkpoints, failed writes and syncs (some a full disk) now and
 * then, and a power cut. The reopened store holds what the model allows in every map, agrees
 * between lookups, iteration and size, verifies, finishes its doublings at a checkpoint and
 * reopens the same.
 */
class DoublingFaultsCrashTest {
    private static final int KEYS = 500;
    private static final String[] MAPS = {"a", "b", "c"};

    @Test
    void doublingsUnderFaultsAndPowerCuts() {
        int points = 40 * TestStores.scale();
        for (int i = 0; i < points; i++) {
            long seed = 0xD0B1E000L + i;
            try {
                point(seed);
            } catch (Throwable e) {
                throw new AssertionError("seed=" + seed + ": " + e, e);
            }
        }
    }

    private static Htod.Builder builder(org.htod.core.device.BlockDevice dev, boolean smallLog, long seed) {
        Htod.Builder b = LayerAccess.hashKeySeed(TestStores.small(dev).durability(Durability.SYNC), seed);
        if (smallLog) {
            b = b.logSize(LoggedOpen.MIN_LOG);
        }
        return LayerAccess.doublingMinBatch(LayerAccess.installBatch(b, 16), 8);
    }

    static void point(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        boolean smallLog = r.nextBoolean();
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        FaultyDevice faults = new FaultyDevice(dev);
        HtodStore store = builder(faults, smallLog, seed).open();
        List<HtodMap<String, String>> maps = new ArrayList<>();
        List<PossibleValues> models = new ArrayList<>();
        for (String name : MAPS) {
            maps.add(store.map(name, Codec.string(), Codec.string()));
            models.add(new PossibleValues());
        }
        dev.armPowerCut(200 + r.nextInt(6000), Counting.WRITES_AND_SYNCS, CutWrite.IN_FLIGHT);
        for (int op = 0; op < 6000; op++) {
            if (r.nextInt(20) == 0) {
                int what = r.nextInt(4);
                if (what == 0) {
                    faults.failSync(1 + r.nextInt(3), FaultyDevice.Fault.IO_ERROR, false);
                } else if (what == 1) {
                    faults.failWrite(1 + r.nextInt(4), FaultyDevice.Fault.DISK_FULL, true);
                } else {
                    faults.failWriteAfter(1 + r.nextInt(4), new int[] {0, 512, Integer.MAX_VALUE}[r.nextInt(3)]);
                }
            }
            int mi = r.nextInt(MAPS.length);
            HtodMap<String, String> m = maps.get(mi);
            PossibleValues model = models.get(mi);
            String k = "k" + r.nextInt(KEYS);
            String v = "v" + op + "x".repeat(r.nextInt(8) == 0 ? 300 : 2);
            int kind = r.nextInt(100);
            List<String> keys = new ArrayList<>();
            String[] values = null;
            try {
                if (kind < 65) {
                    keys.add(k);
                    model.begin(k, v);
                    m.put(k, v);
                    model.acked(k, v);
                } else if (kind < 95) {
                    keys.add(k);
                    model.begin(k, null);
                    m.remove(k);
                    model.acked(k, null);
                } else if (kind < 98) {
                    store.checkpoint();
                } else if (kind < 99 && r.nextInt(4) == 0) {
                    for (int i = 0; i < KEYS; i++) {
                        keys.add("k" + i);
                        model.begin("k" + i, null);
                    }
                    m.clear();
                    for (String x : keys) {
                        model.acked(x, null);
                    }
                } else {
                    store.sync();
                }
                for (String x : keys) {
                    model.since.remove(x); // at SYNC a returned operation is durable
                }
            } catch (HtodException e) {
                if (dev.powerCut()) {
                    break;
                }
                String s = String.valueOf(e.getMessage());
                if (s.contains("takes no more changes") || s.contains("refuses changes") || s.contains("reopen")) {
                    break;
                }
            } finally {
                faults.heal();
            }
        }
        dev.crash(seed);
        try {
            store.close();
        } catch (HtodException expected) {
            // the device is gone
        }
        Map<String, Map<String, String>> found = new HashMap<>();
        try (HtodStore again = builder(disk.reopen(), smallLog, seed).open()) {
            TestStores.verify(again);
            for (int i = 0; i < MAPS.length; i++) {
                HtodMap<String, String> m = again.map(MAPS[i], Codec.string(), Codec.string());
                models.get(i).check(m, KEYS, "map " + MAPS[i] + " after the crash");
                found.put(MAPS[i], new HashMap<>(m));
            }
            again.checkpoint();
            TestStores.verify(again);
        }
        try (HtodStore third = builder(disk.reopen(), smallLog, seed).open()) {
            TestStores.verify(third);
            for (String name : MAPS) {
                HtodMap<String, String> m = third.map(name, Codec.string(), Codec.string());
                org.junit.jupiter.api.Assertions.assertEquals(found.get(name), new HashMap<>(m), "map " + name);
                org.junit.jupiter.api.Assertions.assertEquals(found.get(name).size(), m.size());
            }
        }
    }
}
