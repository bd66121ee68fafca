package org.htod;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;
import org.junit.jupiter.api.Test;

/**
 * Power loss through the public API: a store on a {@code CrashDevice} with durability SYNC runs
 * puts, replaces, removes, compute and putAll until the armed write, the crash keeps a random
 * subset of the unsynced writes, and the store reopened on what survived must hold, for every key,
 * the value of the last operation that returned, or the one in flight; and pass the verifier.
 */
class HtodMapCrashTest {

    @Test
    void acknowledgedWritesSurvivePowerLoss() {
        int points = 400 * TestStores.scale();
        for (int i = 0; i < points; i++) {
            long seed = 0xA11CE000L + i;
            try {
                point(seed);
            } catch (Throwable e) {
                throw new AssertionError("seed=" + seed + ": " + e, e);
            }
        }
    }

    private static void point(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        HtodStore store = TestStores.small(dev).durability(Durability.SYNC).open();
        HtodMap<String, String> m = store.map("crash", Codec.string(), Codec.string());
        dev.armCrashAfterWrites(1 + r.nextInt(1500));
        Map<String, String> acked = new HashMap<>();
        Map<String, String> inFlight = new HashMap<>();
        Set<String> flightKeys = new HashSet<>();
        try {
            for (int op = 0; ; op++) {
                String k = "k" + r.nextInt(150);
                String v = "v" + op + "-" + "x".repeat(r.nextInt(4) == 0 ? 700 : 3);
                inFlight.clear();
                flightKeys.clear();
                int kind = r.nextInt(10);
                if (kind < 4) {
                    flightKeys.add(k);
                    inFlight.put(k, v);
                    m.put(k, v);
                    acked.put(k, v);
                } else if (kind < 6) {
                    flightKeys.add(k);
                    m.remove(k);
                    acked.remove(k);
                } else if (kind < 7) {
                    flightKeys.add(k);
                    inFlight.put(k, v);
                    if (m.replace(k, v) != null) {
                        acked.put(k, v);
                    }
                } else if (kind < 8) {
                    flightKeys.add(k);
                    String nv = acked.getOrDefault(k, "") + "c";
                    inFlight.put(k, nv.length() > 50 ? "c" : nv);
                    m.compute(k, (key, old) -> (old == null ? "" : old).length() + 1 > 50 ? "c" : (old == null ? "" : old) + "c");
                    acked.put(k, inFlight.get(k));
                } else {
                    Map<String, String> batch = new HashMap<>();
                    for (int i = 0; i < 10; i++) {
                        batch.put("k" + r.nextInt(150), v + i);
                    }
                    flightKeys.addAll(batch.keySet());
                    inFlight.putAll(batch);
                    m.putAll(batch);
                    acked.putAll(batch);
                }
            }
        } catch (SimulatedCrashException expected) {
            // power lost in the middle of the operation on flightKeys
        }
        dev.crash(seed);
        try (HtodStore again = TestStores.small(disk.reopen()).open()) {
            assertTrue(!again.recoveryReport().clean());
            TestStores.verify(again);
            HtodMap<String, String> m2 = again.map("crash", Codec.string(), Codec.string());
            for (int i = 0; i < 150; i++) {
                String k = "k" + i;
                String found = m2.get(k);
                boolean ok = Objects.equals(found, acked.get(k))
                        || flightKeys.contains(k) && Objects.equals(found, inFlight.get(k));
                if (!ok) {
                    throw new AssertionError(k + " holds " + found + ", acknowledged " + acked.get(k)
                            + (flightKeys.contains(k) ? ", in flight " + inFlight.get(k) : ""));
                }
            }
        }
    }
}
