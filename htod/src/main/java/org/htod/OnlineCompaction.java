package org.htod;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.htod.core.HtodException;
import org.htod.core.StoreFullException;
import org.htod.core.container.Superblock;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.FileDevice;
import org.htod.core.device.FileNames;
import org.htod.mob.BufferedMap;
import org.htod.mob.LoggedOpen;
import org.htod.mob.WriteLayer;
import org.htod.table.Change;
import org.htod.table.StoredEntry;
import org.htod.table.TableWriter;

/**
 * {@link HtodStore#compact(Progress)}: compaction of an open log-mode store, while other threads
 * read and write it.
 *
 * <ol>
 *   <li>Under the store's gate held exclusively (an instant: no operation is inside), the store
 *       starts recording the map and key of every write that passes the gate from then on.
 *   <li>Without the gate: a consistent copy of every map as of one instant after that ({@link
 *       WriteLayer#copyFrozen}, as {@link HtodStore#copyTo} makes) is written into a new store
 *       beside the file, with batch allocation, and verified. Every write acknowledged before the
 *       copy's instant is in it; every write after it was recorded.
 *   <li>Rounds of carrying over, still without the gate (at most {@link #MAX_ROUNDS}, fewer once
 *       a round has little to do): under the gate, for an instant, the set of recorded keys is
 *       taken and a new one started (no write is inside then, so every write in the set taken has
 *       completed); then, with the gate open, each key taken is read from the store and written
 *       into the new store (or removed from it). A key written meanwhile is in the new set.
 *   <li>A checkpoint of both stores, still without the gate, so that closing them later has little
 *       to install.
 *   <li>Under the gate held exclusively (no operation inside, none let in): each key recorded since
 *       the last round is read from the store (value, expiry, version) and written into the new
 *       store, or removed from it; a map cleared meanwhile is made equal to the store's whole; maps created meanwhile
 *       are created. The new store is closed cleanly, the store's write layer is closed (its last
 *       checkpoint, its device and file lock released), the new file is renamed over the store's
 *       (atomically, the directory synced) and opened with the store's options, and the store's
 *       maps are repointed to it.
 * </ol>
 *
 * A failure before the rename removes the new file and leaves the store in service (if the
 * rename itself fails, the old file is opened again). A failure to open the new file after the
 * rename loses the store to this process: it is marked closed, naming the failure.
 */
final class OnlineCompaction {
    /** Most rounds of carrying over done without the gate. */
    private static final int MAX_ROUNDS = 4;
    /** Keys few enough to carry over under the gate. */
    private static final int ENOUGH = 256;

    private OnlineCompaction() {}

    static CopyReport run(HtodStore store, Path path, Progress progress, Function<Path, BlockDevice> files) {
        long before = StoreOps.size(path);
        Superblock sb = store.storage().superblock();
        Path tmp = FileNames.temporary(path);
        StoreGate gate = store.gate();
        gate.acquire();
        try {
            store.ensureOpen();
            store.recordWrites(true);
        } finally {
            gate.release();
        }
        BlockDevice dev = null;
        HtodStore out = null;
        boolean renamed = false;
        try {
            dev = files.apply(tmp);
            // The store's clock: the carry-over reads the new store (a clear walks its keys), and by
            // the system's, entries live by a store clock running behind it were passed over as
            // expired, and came back after the swap.
            out = StoreOps.like(Htod.builder(dev), sb).clock(store.clock()).open();
            copy(store, out, tmp, progress);
            // Rounds of carrying over without the gate: the set of keys written is swapped for a
            // new one under the gate (an instant: every write recorded in the old set has
            // completed), then each key's state is read and written now, while writers go on; a
            // key written meanwhile is in the new set, for the next round. The last round, under
            // the gate, then has only the writes of the round before it.
            long carried = 0;
            int rounds = 0;
            for (int round = 0; round < MAX_ROUNDS; round++) {
                List<Map.Entry<String, byte[]>> taken;
                gate.acquire();
                try {
                    store.ensureOpen();
                    taken = store.takeWrittenKeys();
                } finally {
                    gate.release();
                }
                carryOver(store.layer(), out, taken);
                carried += taken.size();
                rounds++;
                if (taken.size() < ENOUGH) {
                    break;
                }
            }
            // Little left to install when both are closed under the gate.
            store.checkpoint();
            out.checkpoint();
            gate.acquire();
            long held = System.nanoTime();
            try {
                store.ensureOpen();
                WriteLayer old = store.layer();
                List<Map.Entry<String, byte[]>> last = store.writtenKeys();
                carryOver(old, out, last);
                store.recordWrites(false);
                long entries = 0;
                for (String name : out.mapNames()) {
                    entries += out.map(name, Codec.bytes(), Codec.bytes()).longSize();
                }
                int maps = out.mapNames().size();
                out.close(); // closed cleanly; a failed close leaves it to cleanUp, and the store in service
                out = null;
                // The new file opened (and locked) under its temporary name, renamed over the
                // store's while both files are locked, and only then the old one closed: no other
                // open of the name gets in between (one did, between closing the old file and
                // opening the new: the store was lost, or two stores had one name and a write made
                // through the other was lost).
                FileDevice next = FileDevice.open(tmp, Long.MAX_VALUE, 512, store.reopen().mapReads());
                try {
                    next.movedTo(path);
                } catch (RuntimeException e) {
                    closeQuietly(next, e);
                    throw e; // not renamed: the store stays in service on its file
                }
                renamed = true;
                try {
                    old.close();
                } catch (HtodException e) {
                    if (!old.isClosed()) {
                        // Superseded: the new file holds every acknowledged write (carried over
                        // with operations held off), so the old layer is ended, not left in service.
                        try {
                            old.abandon();
                        } catch (InterruptedException x) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }
                reopen(store, path, next, "the compacted file, renamed into place");
                String note = (carried + last.size()) + " keys written during the copy carried over, " + last.size()
                        + " of them with operations held off, after " + rounds + " rounds; operations held off for "
                        + (System.nanoTime() - held) / 1_000_000 + " ms at the swap";
                return new CopyReport(path, maps, entries, before, StoreOps.size(path), "online", 0, -1, note);
            } finally {
                store.recordWrites(false);
                gate.release();
            }
        } catch (StoreFullException e) {
            throw cleanUp(new StoreFullException("the disk is full: cannot write the compacted copy of " + path + " into "
                    + tmp + ", which is removed; the store stays in service (" + e.getMessage() + ")", e), out, dev, tmp,
                    renamed, store);
        } catch (RuntimeException e) {
            throw cleanUp(e, out, dev, tmp, renamed, store);
        }
    }

    private static void closeQuietly(BlockDevice d, RuntimeException e) {
        try {
            d.close();
        } catch (RuntimeException again) {
            e.addSuppressed(again);
        }
    }

    static RuntimeException cleanUp(RuntimeException e, HtodStore out, BlockDevice dev, Path tmp, boolean renamed,
            HtodStore store) {
        store.recordWrites(false);
        if (renamed) {
            return e;
        }
        if (out != null) {
            try {
                out.close();
            } catch (RuntimeException again) {
                e.addSuppressed(again);
                // A close that failed (the disk full) leaves the new store open, its flusher
                // trying again for good: ended, as its file is about to go. Each failed
                // compaction left one more flusher thread and store behind.
                WriteLayer l = out.layer();
                if (l != null && !l.isClosed()) {
                    try {
                        l.abandon();
                    } catch (InterruptedException x) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        }
        if (dev != null) {
            try {
                dev.close(); // a close that failed (the disk full) leaves it open; the file is about to go
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
        }
        StoreOps.deleteQuietly(tmp, e);
        return e;
    }

    /** The consistent copy, then a check of what was written. */
    private static void copy(HtodStore store, HtodStore out, Path tmp, Progress progress) {
        StoreOps.writeCopy(store, out, tmp, progress, true);
    }

    /** Writes into {@code out} what was written into the store since the copy began. */
    private static void carryOver(WriteLayer old, HtodStore out, List<Map.Entry<String, byte[]>> written) {
        for (String name : old.mapNames()) {
            out.map(name, Codec.bytes(), Codec.bytes());
        }
        for (Map.Entry<String, byte[]> w : written) {
            BufferedMap src = old.map(w.getKey(), false);
            TableWriter dst = out.map(w.getKey(), Codec.bytes(), Codec.bytes()).writer();
            if (src == null) {
                continue;
            }
            if (w.getValue() != null) {
                carry(src, dst, w.getValue());
                continue;
            }
            // cleared meanwhile: every key of the copy the store no longer has goes, then every entry it has
            List<byte[]> keys = new java.util.ArrayList<>();
            keys.addAll(out.map(w.getKey(), Codec.bytes(), Codec.bytes()).keySet());
            for (byte[] k : keys) {
                carry(src, dst, k);
            }
            for (java.util.Iterator<StoredEntry> it = src.iterator(false); it.hasNext();) {
                carry(src, dst, it.next().key());
            }
        }
    }

    /** Makes {@code key} in {@code dst} what it is in {@code src}: its value, expiry and version, or absent. */
    private static void carry(BufferedMap src, TableWriter dst, byte[] key) {
        StoredEntry e = src.get(key);
        if (e == null) {
            dst.update(key, cur -> cur == null ? null : Change.REMOVE);
        } else {
            byte[] v = e.value();
            long expiry = e.expiry();
            long version = e.version();
            dst.update(key, cur -> Change.put(v, expiry, version));
        }
    }

    /**
     * Opens the store on {@code file}, its compacted file renamed into place and locked, and
     * repoints the store to it; if that fails, the store is lost to this process (marked closed),
     * and this throws.
     */
    private static void reopen(HtodStore store, Path path, FileDevice file, String what) {
        CountingDevice d = new CountingDevice(new StoreDevice(file), false);
        try {
            LoggedOpen.Opened o = store.reopen().open().apply(d);
            store.swapped(o.layer(), d);
        } catch (RuntimeException e) {
            try {
                d.close();
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            HtodException lost = new HtodException("online compaction of " + path + " could not open " + what
                    + "; the store is closed (open the file again): " + e.getMessage(), e);
            store.lost(lost);
            throw lost;
        }
    }
}
