package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.htod.core.container.ContainerConfig;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.htod.core.storage.Storage;
import org.junit.jupiter.api.Test;

/**
 * The one state a flush's partial writes can leave that no operation ever made: a key removed
 * from the middle of its chain and put again before the next flush, then a crash that keeps the
 * new head link but loses the unlinking one. Both entries of the key are reachable; recovery keeps
 * the first (the newer) and frees the other.
 */
class StaleEntryRecoveryTest {

    /** Drops the write at one device offset, as a crash that kept the writes around it would. */
    private static final class LosesOneWrite extends ForwardingDevice {
        long lost = -1;

        LosesOneWrite(BlockDevice inner) {
            super(inner);
        }

        @Override
        public void write(long pos, ByteBuffer src) {
            if (pos != lost) {
                super.write(pos, src);
            }
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static TableOptions opts(boolean syncEach, long cache) {
        return TableOptions.defaults().withSyncEachWrite(syncEach).withClock(() -> 0L).withCacheBytes(cache);
    }

    /** The crash's state: the disk as power left it, and the table as written before it. */
    private record Crashed(MemoryDevice disk, HashtableOnDisk t, byte[] a, byte[] b, long oldA) {}

    /**
     * Two keys of one bucket, a then b (so b is first in the chain and a behind it); a removed and
     * put again, and a flush whose link unlinking old a is lost: old a, stale, is still reachable.
     */
    private static Crashed crashWithAStaleEntry() {
        MemoryDevice disk = new MemoryDevice();
        LosesOneWrite dev = new LosesOneWrite(disk);
        TableStore ts = TableStore.open(Storage.create(dev, ContainerConfig.builder().grain(64).logSize(0).build()),
                opts(false, 1 << 20));
        HashtableOnDisk t = ts.table("t", true);
        byte[] a = bytes("a");
        byte[] b = null;
        for (int i = 0; b == null; i++) {
            byte[] k = bytes("b" + i);
            if ((t.hash(k) & 63) == (t.hash(a) & 63)) {
                b = k;
            }
        }
        t.update(a, cur -> Change.put(bytes("old"), 0));
        t.update(b, cur -> Change.put(bytes("b"), 0));
        ts.sync();
        long oldA = t.find(t.shape, a, t.hash(a), false).entry.handle;
        long bEntry = t.find(t.shape, b, t.hash(b), false).entry.handle;

        t.update(a, cur -> Change.REMOVE); // b.next := 0, waiting
        t.update(a, cur -> Change.put(bytes("new"), 0)); // slot := new a, whose next is b, waiting
        dev.lost = ts.heap().address(bEntry) + HashtableOnDisk.BLOCK_HEADER + Entries.NEXT_OFFSET;
        ts.gate().flush(); // a sync, then the two links: only the slot's reaches the disk
        // power lost here: the old entry of a is still allocated, its free waiting for a sync
        return new Crashed(disk, t, a, b, oldA);
    }

    @Test
    void aKeyReachedTwiceKeepsItsFirstEntry() {
        Crashed c = crashWithAStaleEntry();
        TableStore reopened = TableStore.open(Storage.open(c.disk().reopen()), opts(false, 1 << 20));
        assertEquals(1, reopened.recovery().staleEntriesUnlinked(), reopened.recovery().toString());
        HashtableOnDisk t2 = reopened.table("t", false);
        assertArrayEquals(bytes("new"), t2.get(c.a()).value());
        assertArrayEquals(bytes("b"), t2.get(c.b()).value());
        assertEquals(2, t2.size());
        reopened.verify(true); // no key twice, and the stale entry was freed
        reopened.close();
    }

    /**
     * The same crash, and a stale entry whose link names itself (its check made right): recovery
     * refuses the chain as a cycle. It went round it for ever, each turn one more unlink to make,
     * until memory ran out: an open that never returned.
     */
    @Test
    void aStaleEntryLinkedToItselfIsACycleNotAnEndlessWalk() {
        Crashed c = crashWithAStaleEntry();
        c.t().writeNext(c.oldA(), c.t().entries.load(c.oldA()).salt(), c.oldA()); // the stale entry names itself
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(30), () -> {
            org.htod.core.CorruptStoreException e = org.junit.jupiter.api.Assertions.assertThrows(
                    org.htod.core.CorruptStoreException.class,
                    () -> TableStore.open(Storage.open(c.disk().reopen()), opts(false, 1 << 20)));
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("a cycle"), e.getMessage());
        });
    }
}
