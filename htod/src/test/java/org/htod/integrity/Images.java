package org.htod.integrity;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.StorageMethod;
import org.htod.VerifyReport;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;

/**
 * Store images for the integrity tests: the bytes of a store built by a {@link Workload} and left
 * closed, left open after a sync, or cut by a power loss, with the truth a reader must find in
 * them.
 */
final class Images {
    private Images() {}

    /** How the store was left when its bytes were taken. */
    enum Kind {
        /** Closed cleanly: opens from the heap snapshot, counts from the table headers. */
        CLEAN,
        /** Synced and abandoned open: opens through recovery, with nothing lost. */
        OPEN_SYNCED,
        /** Power cut at a seeded write during more work at durability SYNC, a seeded subset kept. */
        CRASH_SYNC,
        /** The same at durability NONE, with a sync now and then. */
        CRASH_NONE
    }

    /** {@code direct}: built in direct mode (read back through log mode's open, which converts it). */
    record Spec(StorageMethod method, Kind kind, int grain, long seed, boolean direct) {
        Spec(StorageMethod method, Kind kind, int grain, long seed) {
            this(method, kind, grain, seed, false);
        }

        String name() {
            return method + "/" + kind + "/grain " + grain + "/seed 0x" + Long.toHexString(seed)
                    + (direct ? "/direct" : "/log");
        }
    }

    /** An image, the truth its reader must find, and its structures located. */
    record Image(Spec spec, byte[] bytes, Model truth, ImageMap map) {}

    static Htod.Builder builder(BlockDevice dev) {
        return Htod.builder(dev).clock(Model.CLOCK).createIfMissing(false);
    }

    static Image build(Spec spec) {
        MemoryDevice platter = new MemoryDevice();
        // Synced and left open is a crash too: in log mode the flusher goes on writing after the
        // sync, and a copy taken meanwhile would not be a state any crash can leave.
        boolean crash = spec.kind != Kind.CLEAN;
        CrashDevice cut = crash ? new CrashDevice(platter) : null;
        Durability d = spec.kind == Kind.CRASH_SYNC ? Durability.SYNC : Durability.NONE;
        HtodStore s = Htod.builder(crash ? cut : platter).storageMethod(spec.method).grain(spec.grain)
                .logSize(1 << 20).directMode(spec.direct).durability(d).clock(Model.CLOCK).open();
        Workload w = new Workload(spec.seed);
        w.populate(s);
        s.sync();
        w.tracker.durable();
        Model truth;
        switch (spec.kind) {
            case CLEAN:
                s.close();
                truth = w.tracker.model;
                break;
            case OPEN_SYNCED:
                cut.crash(spec.seed); // keeps a seeded subset of what was written after the sync
                byte[] open = bytes(platter.reopen());
                return finish(spec, open, w, readTruth(spec, open, w));
            default:
                work(spec, s, w, cut);
                truth = readTruth(spec, bytes(platter.reopen()), w);
                break;
        }
        return finish(spec, bytes(platter.reopen()), w, truth);
    }

    /** More work until the power is cut at a seeded write; the crash keeps a seeded subset. */
    private static void work(Spec spec, HtodStore s, Workload w, CrashDevice cut) {
        SplittableRandom r = new SplittableRandom(spec.seed ^ 0x5EEDL);
        cut.armCrashAfterWrites(1 + r.nextInt(1500));
        try {
            for (int op = 0; op < 100_000; op++) {
                if (spec.kind == Kind.CRASH_NONE && r.nextInt(40) == 0) {
                    s.sync();
                    w.tracker.durable();
                }
                w.step();
                if (spec.kind == Kind.CRASH_SYNC) {
                    w.tracker.durable();
                }
            }
            throw new AssertionError("no power cut in 100,000 operations");
        } catch (SimulatedCrashException expected) {
            // the power failed in the operation just begun
        } catch (org.htod.core.HtodException e) {
            if (!cut.powerCut()) {
                throw e;
            }
            // the power failed in the flusher, or in an earlier write the store reports now
        }
        cut.crash(spec.seed);
    }

    /** What the undamaged crash image reads back as, checked against what the writes allow. */
    private static Model readTruth(Spec spec, byte[] image, Workload w) {
        Model truth = new Model();
        try (HtodStore s = builder(device(image)).open()) {
            VerifyReport v = s.verify();
            if (!v.ok()) {
                throw new AssertionError(spec.name() + ": the undamaged crash image does not verify: " + v);
            }
            for (Model.MapModel<?, ?> m : w.tracker.model.maps) {
                truth.maps.add(readAll(s, m));
            }
        }
        String wrong = w.tracker.explain(truth);
        if (wrong != null) {
            throw new AssertionError(spec.name() + ": the undamaged crash image holds what no crash may leave: " + wrong);
        }
        return truth;
    }

    private static <K, V> Model.MapModel<K, V> readAll(HtodStore s, Model.MapModel<K, V> like) {
        Model.MapModel<K, V> out = like.emptyCopy();
        HtodMap<K, V> m = s.map(like.name, like.keys, like.values);
        for (Map.Entry<K, V> e : m.entrySet()) {
            out.entries.put(like.keyBytes(e.getKey()), like.valueBytes(e.getValue()));
        }
        return out;
    }

    private static Image finish(Spec spec, byte[] bytes, Workload w, Model truth) {
        w.addProbes(truth);
        return new Image(spec, bytes, truth, ImageMap.of(bytes, truth));
    }

    /** A memory device holding a copy of {@code image}. */
    static MemoryDevice device(byte[] image) {
        MemoryDevice d = new MemoryDevice();
        if (image.length > 0) {
            d.write(0, ByteBuffer.wrap(image));
        }
        return d;
    }

    /** Every byte of {@code dev}. */
    static byte[] bytes(BlockDevice dev) {
        ByteBuffer b = ByteBuffer.allocate(Math.toIntExact(dev.size()));
        dev.read(0, b);
        return b.array();
    }

    static long crc(byte[] b) {
        CRC32C c = new CRC32C();
        c.update(b);
        return c.getValue() ^ ((long) b.length << 32);
    }
}
