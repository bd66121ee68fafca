package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongFunction;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.core.CorruptStoreException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.log.Log;
import org.junit.jupiter.api.Test;

/**
 * Replay of relog units ({@link DataRecord#PART_TYPE}), from logs written record by record: a
 * unit's changes are replayed when every part is read in order, and left out whole when the log's
 * end or another record cuts it short; a part that follows no part of its unit is damage.
 */
class RelogUnitReplayTest {
    /** A record to write into the log: its type and payload. */
    private record Rec(int type, ByteBuffer payload) {}

    private static DataRecord.Op put(long tableId, String key, String value) {
        return new DataRecord.Op(tableId, key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8),
                1, 0);
    }

    private static Rec part(int index, int count, long tableId, String... keys) {
        List<DataRecord.Op> ops = new ArrayList<>();
        for (String k : keys) {
            ops.add(put(tableId, k, "v" + k));
        }
        return new Rec(DataRecord.PART_TYPE, DataRecord.encodePart(index, count, ops));
    }

    private static Rec data(long tableId, String key) {
        return new Rec(DataRecord.TYPE, DataRecord.encode(List.of(put(tableId, key, "v" + key))));
    }

    /** Map "m" after the replay, key to {@code value@version}, and the open's recovery report. */
    private record Replayed(Map<String, String> m, String report) {}

    /**
     * Map "m" of a new store at NONE after {@code records} (given the map's table id) were
     * written straight into its log and synced, the power cut and the store opened again.
     */
    private static Replayed replayed(LongFunction<List<Rec>> records) {
        MemoryDevice disk = crashedAfter(records);
        try (HtodStore again = Htod.builder(disk.reopen()).open()) {
            Map<String, String> m = LogStores.content(again).get("m");
            LogStores.verify(again);
            return new Replayed(m, again.recoveryReport().detail());
        }
    }

    /**
     * The device of a new store at NONE with a map "m", after {@code records} (given the map's
     * table id) were written straight into its log and synced and the power was cut. The log is
     * driven directly, with nothing in the write buffer; should the flusher take a checkpoint
     * meanwhile (an idle one after a second), which would move replay past the records, it is
     * tried again.
     */
    private static MemoryDevice crashedAfter(LongFunction<List<Rec>> records) {
        for (int attempt = 0; attempt < 20; attempt++) {
            MemoryDevice disk = new MemoryDevice();
            CrashDevice crash = new CrashDevice(disk);
            HtodStore s = Htod.builder(crash).grain(64).logSize(1 << 20).durability(Durability.NONE).open();
            s.map("m", Codec.string(), Codec.string());
            s.sync();
            WriteLayer layer = LogStores.layer(s);
            long checkpoints = layer.stats().checkpoints;
            Log log = layer.log;
            for (Rec r : records.apply(layer.map("m", false).tableId)) {
                log.append(r.type(), r.payload());
            }
            log.sync();
            boolean moved = layer.stats().checkpoints != checkpoints;
            crash.crashKeeping(at -> false);
            LogStores.closeQuietly(s);
            if (!moved) {
                return disk;
            }
        }
        throw new AssertionError("the flusher took a checkpoint before every crash, 20 times");
    }

    @Test
    void aUnitReadWholeIsReplayed() {
        Replayed r = replayed(t -> List.of(part(0, 3, t, "a", "b"), part(1, 3, t, "c"), part(2, 3, t, "d")));
        assertEquals(List.of("a", "b", "c", "d"), new ArrayList<>(r.m().keySet()));
        assertEquals("va@1", r.m().get("a"));
        assertTrue(!r.report().contains("cut short"), r.report());
    }

    @Test
    void aUnitTheLogsEndCutsShortIsLeftOutWhole() {
        Replayed r = replayed(t -> List.of(data(t, "x"), part(0, 3, t, "a", "b"), part(1, 3, t, "c")));
        assertEquals(List.of("x"), new ArrayList<>(r.m().keySet()), "the records before the unit stay");
        assertTrue(r.report().contains("; 1 relog unit cut short left out"), r.report());
    }

    @Test
    void aUnitAnotherRecordCutsShortIsLeftOutWhole() {
        Replayed r = replayed(t -> List.of(part(0, 2, t, "a"), data(t, "x"), part(0, 2, t, "b"),
                part(1, 2, t, "c"), part(0, 2, t, "d"), part(0, 2, t, "e"), part(1, 2, t, "f")));
        assertEquals(List.of("b", "c", "e", "f", "x"), new ArrayList<>(r.m().keySet()),
                "a cut by a data record, d by the next unit's first part");
        assertTrue(r.report().contains("; 2 relog units cut short left out"), r.report());
    }

    @Test
    void aPartThatFollowsNoPartOfItsUnitIsDamage() {
        CorruptStoreException e = assertThrows(CorruptStoreException.class,
                () -> replayed(t -> List.of(data(t, "x"), part(1, 2, t, "a"))));
        assertTrue(e.getMessage().contains("part 1 of a relog unit of 2 parts"), e.getMessage());
        e = assertThrows(CorruptStoreException.class,
                () -> replayed(t -> List.of(part(0, 2, t, "a"), data(t, "x"), part(1, 2, t, "b"))));
        assertTrue(e.getMessage().contains("does not follow"), e.getMessage());
        e = assertThrows(CorruptStoreException.class,
                () -> replayed(t -> List.of(part(0, 2, t, "a"), part(1, 3, t, "b"))));
        assertTrue(e.getMessage().contains("does not follow"), e.getMessage());
        e = assertThrows(CorruptStoreException.class,
                () -> replayed(t -> List.of(part(0, 3, t, "a"), part(2, 3, t, "b"))));
        assertTrue(e.getMessage().contains("does not follow"), e.getMessage());
    }

    @Test
    void aPartOfNoPossibleUnitIsDamage() {
        CorruptStoreException e = assertThrows(CorruptStoreException.class,
                () -> replayed(t -> List.of(part(0, 1, t, "a"))));
        assertTrue(e.getMessage().contains("part 0 of a relog unit of 1 parts"), e.getMessage());
        e = assertThrows(CorruptStoreException.class,
                () -> replayed(t -> List.of(new Rec(DataRecord.PART_TYPE, ByteBuffer.allocate(6)))));
        assertTrue(e.getMessage().contains("a part of a relog unit of 6 bytes"), e.getMessage());
    }

    /**
     * A unit replayed after a crash, then one install that takes every key of its first part and
     * not those of its second, a checkpoint, and a second crash: the keys of the second part keep
     * the log from the unit's first part, so the checkpoint names no position inside the unit,
     * and the next replay reads it whole. Buffered by the first replay at their own parts' positions,
     * they let the checkpoint name the second part, and the next open refused the store ("replay
     * begins inside the unit").
     */
    @Test
    void aUnitReplayedOnceIsReplayedWholeAfterALaterCheckpointAndCrash() {
        int first = 600; // fewer than an install takes at once (650 keys with a 1 MiB log), more than half
        for (int attempt = 0; attempt < 20; attempt++) {
            MemoryDevice disk = crashedAfter(t -> {
                String[] a = new String[first];
                String[] b = new String[first];
                for (int i = 0; i < first; i++) {
                    a[i] = "a" + i;
                    b[i] = "b" + i;
                }
                return List.of(part(0, 2, t, a), part(1, 2, t, b));
            });
            CrashDevice crash = new CrashDevice(disk.reopen());
            HtodStore s = Htod.builder(crash).open();
            WriteLayer layer = LogStores.layer(s);
            ReentrantLock install = layer.installLock();
            install.lock(); // the flusher waits: the install and checkpoint below are the test's
            boolean partly;
            try {
                int buffered = layer.mob.keys();
                layer.installs.installOnce();
                partly = buffered == 2 * first && layer.mob.keys() > 0 && layer.mob.keys() < first;
                if (partly) {
                    layer.installs.checkpoint(false);
                }
            } finally {
                install.unlock();
            }
            crash.crashKeeping(at -> false);
            LogStores.closeQuietly(s);
            if (!partly) {
                continue; // the flusher installed before the test held it off: again
            }
            try (HtodStore again = Htod.builder(disk.reopen()).open()) {
                Map<String, String> m = LogStores.content(again).get("m");
                assertEquals(2 * first, m.size());
                assertEquals("vb" + (first - 1) + "@1", m.get("b" + (first - 1)));
                LogStores.verify(again);
            }
            return;
        }
        throw new AssertionError("the flusher installed the replayed unit before the test could, 20 times");
    }
}
