package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.htod.core.HtodException;
import org.htod.core.HtodIOException;
import org.htod.core.StoreFullException;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A device that fails in the middle of the heap's work (an I/O error, the disk full): the error
 * reaches the caller with its type, the heap refuses further changes instead of acting on free
 * lists that may no longer match the disk, and a reopen recovers every block that was synced.
 */
class HeapFaultTest {

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aFailedWriteLeavesTheHeapUsableOrRefusingAndAReopenKeepsEverySyncedBlock(StorageMethod m) {
        for (FaultyDevice.Fault fault : FaultyDevice.Fault.values()) {
            for (int nth = 1; nth <= 12; nth++) {
                MemoryDevice mem = new MemoryDevice();
                FaultyDevice dev = new FaultyDevice(mem);
                Heap h = Heap.create(dev, HeapFixture.options(m));
                Map<Long, Integer> synced = new HashMap<>();
                for (int i = 0; i < 30; i++) {
                    synced.put(h.allocate(HeapFixture.payload(i, 700 + 300 * i)), 700 + 300 * i);
                }
                Long first = synced.keySet().iterator().next();
                h.free(first);
                synced.remove(first);
                h.sync();
                dev.failWrite(nth, fault, false);
                RuntimeException e = assertThrows(RuntimeException.class, () -> {
                    for (int i = 0; i < 40; i++) {
                        long x = h.allocate(HeapFixture.payload(100 + i, 900));
                        if (i % 3 == 0) {
                            h.free(x);
                        }
                        if (i % 7 == 0) {
                            h.sync();
                        }
                    }
                });
                assertTrue(fault == FaultyDevice.Fault.DISK_FULL ? e instanceof StoreFullException : e instanceof HtodIOException,
                        "typed error for " + fault + ": " + e);
                dev.heal();
                // A failed allocation write is undone and leaves the heap usable; a failed free or
                // sync leaves memory and disk unsure of each other, and the heap refuses changes.
                try {
                    h.allocate(HeapFixture.payload(1, 10));
                    h.sync();
                    h.verify(); // what memory holds is what the disk says
                } catch (HtodException refused) {
                    assertTrue(refused.getMessage().contains("reopen"), refused.getMessage());
                }
                Heap back = Heap.open(mem, h.opt, null);
                for (Map.Entry<Long, Integer> s : synced.entrySet()) {
                    long id = -1;
                    for (int i = 0; i < 30; i++) {
                        if (700 + 300 * i == s.getValue()) {
                            id = i;
                        }
                    }
                    assertEquals(HeapFixture.payload(id, s.getValue()), back.read(s.getKey()), fault + " at write " + nth);
                }
                back.verify();
            }
        }
    }

    /**
     * Each way an allocation places a block (a free block whole, a free block split, the tail, a
     * batch), its write failing at each of its device writes: the error reaches the caller, and
     * every change the allocation made in memory is taken back ({@code AllocationUndo}), so the
     * heap's figures are what they were, the same request then succeeds, and memory matches the
     * disk.
     */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aFailedAllocationWriteIsTakenBackInMemory(StorageMethod m) {
        int[] requests = {1000, 400, 6000, -1}; // whole (a freed 1,000-byte block), split (of one), tail, batch
        for (int request : requests) {
            for (int nth = 1; nth <= 3; nth++) {
                FaultyDevice dev = new FaultyDevice(new MemoryDevice());
                Heap h = Heap.create(dev, HeapFixture.options(m));
                java.util.List<Long> blocks = new java.util.ArrayList<>();
                for (int i = 0; i < 12; i++) {
                    blocks.add(h.allocate(HeapFixture.payload(i, i % 2 == 0 ? 1000 : 3000)));
                }
                for (int i = 2; i < 12; i += 4) {
                    h.free(blocks.get(i)); // 1,000-byte blocks in the middle of their list
                }
                h.sync(); // the freed extents durable, so that they may be split
                HeapStats before = h.stats();
                dev.failWrite(nth, FaultyDevice.Fault.IO_ERROR, false);
                int raised = dev.faultsRaised();
                String where = m + ", request " + request + ", write " + nth;
                try {
                    place(h, request);
                } catch (HtodIOException expected) {
                    // the case under test
                }
                dev.heal();
                if (dev.faultsRaised() == raised) {
                    continue; // this placement makes fewer writes than nth
                }
                assertEquals(before, h.stats(), where + ": the failed allocation is undone");
                long[] placed = place(h, request);
                for (int k = 0; k < placed.length; k++) {
                    assertEquals(HeapFixture.payload(1000 + k, size(request, k)), h.read(placed[k]), where);
                }
                h.sync();
                h.verify();
            }
        }
    }

    /**
     * A failed allocation write that reached the disk, whole or in part (a request the disk fails
     * midway): the allocation is undone, but the disk may now say what memory does not, the
     * allocated status of a free block, a split's smaller extent, a block past the tail. So the
     * block's header is written again as the free lists hold it ({@code AllocationUndo}), and a
     * tail checkpoint keeps recovery from believing headers past the tail. Each way an allocation
     * writes (a free block of about 100,000 bytes whole, split, the tail), failing after some of
     * its bytes, then the block used again, before a sync or after: the heap then matches its disk
     * (no leaked block, nothing allocated it does not hold), and so does a reopen by recovery,
     * where every live block reads back and new blocks placed in the free space leave them intact.
     */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aFailedAllocationWriteThatLandedIsWrittenBackAsTheListsHoldIt(StorageMethod m) {
        int[] landings = {8, BlockHeader.SIZE, BlockHeader.SIZE + 500, Integer.MAX_VALUE};
        for (int failed : new int[] {100_000, 50_000, 20_000}) { // the free block whole, split; the tail
            for (int landing : landings) {
                for (int reuse : new int[] {100_000, 50_000, -100_000, -50_000}) { // negative: after a sync
                    String where = m + ", failed request " + failed + " landing " + landing + " bytes, "
                            + (reuse < 0 ? "a sync, " : "") + "reused for " + Math.abs(reuse);
                    MemoryDevice mem = new MemoryDevice();
                    FaultyDevice dev = new FaultyDevice(mem);
                    Heap h = Heap.create(dev, HeapFixture.options(m));
                    Map<Long, java.nio.ByteBuffer> live = new HashMap<>();
                    java.util.List<Long> blocks = new java.util.ArrayList<>();
                    for (int i = 0; i < 12; i++) {
                        java.nio.ByteBuffer p = HeapFixture.payload(i, i % 2 == 0 ? 1000 : 100_000);
                        long id = h.allocate(p);
                        blocks.add(id);
                        live.put(id, p);
                    }
                    h.free(blocks.get(7)); // the one free large block, between live ones
                    live.remove(blocks.get(7));
                    h.sync();
                    dev.failWriteAfter(1, landing);
                    assertThrows(HtodIOException.class, () -> h.allocate(HeapFixture.payload(500, failed)), where);
                    assertEquals(1, dev.faultsRaised(), where);
                    if (reuse < 0) {
                        h.sync();
                    }
                    java.nio.ByteBuffer p = HeapFixture.payload(501, Math.abs(reuse));
                    live.put(h.allocate(p), p);
                    h.sync();
                    HeapVerifyReport r = h.verify();
                    assertEquals(0, r.leakedBlocks(), where + ": " + r);
                    Heap back = Heap.open(mem, h.opt, null); // h abandoned, as after a crash
                    back.verify();
                    java.util.Set<Long> allocated = new java.util.HashSet<>();
                    back.forEachAllocated((handle, length) -> allocated.add(handle));
                    assertEquals(live.keySet(), allocated, where + ": the blocks recovery finds allocated");
                    for (int i = 0; i < 20; i++) { // fills what the free lists hold
                        java.nio.ByteBuffer q = HeapFixture.payload(600 + i, 64 + 4000 * i);
                        live.put(back.allocate(q), q);
                    }
                    for (Map.Entry<Long, java.nio.ByteBuffer> e : live.entrySet()) {
                        assertEquals(e.getValue(), back.read(e.getKey()), where + ": block " + e.getKey());
                    }
                    back.verify();
                }
            }
        }
    }

    /**
     * After a recovery by lists (PL, PFL), the remainder a torn split lost is written back by the
     * open, whose scan of every header applies the remainder rule to every block: its header is
     * durable before anything else is written, so the note in front of it is no longer the only
     * record of that space. An allocation of that block that then fails after part of its write
     * landed is undone on disk by writing the block's header back, which may drop the note; a
     * crash before the undo's sync that keeps the write-back loses nothing. Both ways the block is
     * taken: split and whole. The crashes keep exactly the writes the case needs ({@link
     * org.htod.core.device.CrashDevice#crashKeeping}).
     */
    @ParameterizedTest
    @EnumSource(value = StorageMethod.class, names = {"PL", "PFL"})
    void aFailedAllocationAfterARecoveryByListsLosesNoRemainder(StorageMethod m) {
        for (int failing : new int[] {30_000, 49_500}) { // B split; B whole (within the acceptable waste)
            String where = m + ", the failed allocation of " + failing + " bytes";
            // A capacity that leaves the tail too short for the requests below: they go to B.
            Heap probe = Heap.create(new MemoryDevice(), HeapFixture.options(m));
            for (int i = 0; i < 12; i++) {
                probe.allocate(HeapFixture.payload(i, i % 2 == 0 ? 1000 : 100_000));
            }
            HeapOptions opt = HeapOptions.defaults(m, HeapFixture.HEAP_OFFSET, probe.tail() + 20_000, 0x1234_5678_9ABCL);
            MemoryDevice platter = new MemoryDevice();
            org.htod.core.device.CrashDevice crash = new org.htod.core.device.CrashDevice(platter);
            Heap h = Heap.create(crash, opt);
            Map<Long, java.nio.ByteBuffer> live = new HashMap<>();
            java.util.List<Long> blocks = new java.util.ArrayList<>();
            for (int i = 0; i < 12; i++) {
                java.nio.ByteBuffer p = HeapFixture.payload(i, i % 2 == 0 ? 1000 : 100_000);
                blocks.add(h.allocate(p));
                live.put(blocks.get(i), p);
            }
            long b = h.address(blocks.get(7));
            h.free(blocks.get(7));
            live.remove(blocks.get(7));
            h.sync();
            long part = h.allocate(HeapFixture.payload(500, 50_000)); // splits B, the one free block
            assertEquals(b, h.address(part), where);
            long r = b + h.blockSize(part);
            long note = h.headerAt(b).remainder;
            assertTrue(note > 0 && h.headerAt(r) != null, where);
            long rSector = r / platter.sectorSize() * platter.sectorSize();

            // A torn split: all of it lands but the sector of the remainder's header.
            crash.crashKeeping(at -> at != rSector);
            crash = new org.htod.core.device.CrashDevice(platter);
            FaultyDevice faults = new FaultyDevice(crash);
            Heap back = Heap.open(faults, opt, null);
            assertEquals("lists", back.recoveryReport().path(), where);
            assertEquals(note, back.headerAt(b).remainder, where);
            BlockHeader rebuilt = back.headerAt(r);
            assertTrue(rebuilt != null && !rebuilt.allocated && rebuilt.size == note,
                    where + ": the open wrote the remainder back as a free block");
            assertEquals(0, back.verify().leakedBlocks(), where);
            back.free(back.handleAt(b)); // the split's part, which nothing holds
            back.sync();

            faults.failWriteAfter(1, BlockHeader.SIZE + 100); // the allocation's write, part of it landed
            faults.failSync(1, FaultyDevice.Fault.IO_ERROR, false); // the undo's sync: the heap refuses changes
            assertThrows(HtodIOException.class, () -> back.allocate(HeapFixture.payload(501, failing)), where);
            assertEquals(2, faults.faultsRaised(), where);
            assertTrue(back.refusesChanges(), where);

            // Power lost before any sync: every write since lands, the header written back with them.
            crash.crashKeeping(at -> true);
            Heap third = Heap.open(platter, opt, null);
            HeapVerifyReport report = third.verify();
            assertEquals(0, report.leakedBlocks(), where + ": " + report);
            assertTrue(third.headerAt(r) != null, where + ": the remainder is still there");
            java.nio.ByteBuffer p = HeapFixture.payload(502, 30_000);
            live.put(third.allocate(p), p);
            third.coalesce();
            report = third.verify();
            assertEquals(0, report.leakedBlocks(), where + ": " + report);
            for (Map.Entry<Long, java.nio.ByteBuffer> e : live.entrySet()) {
                assertEquals(e.getValue(), third.read(e.getKey()), where + ": block " + e.getKey());
            }
        }
    }

    /** Places {@code request} bytes with {@link Heap#allocate}, or with {@code -1} a batch of four. */
    private static long[] place(Heap h, int request) {
        if (request > 0) {
            return new long[] {h.allocate(HeapFixture.payload(1000, request))};
        }
        java.util.List<java.nio.ByteBuffer> batch = new java.util.ArrayList<>();
        for (int k = 0; k < 4; k++) {
            batch.add(HeapFixture.payload(1000 + k, size(request, k)));
        }
        return h.allocateBatch(batch);
    }

    private static int size(int request, int k) {
        return request > 0 ? request : 900 + 1100 * k;
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aFullHeapRefusesWithATypedErrorAndStaysUsable(StorageMethod m) {
        HeapOptions small = new HeapOptions(m, HeapFixture.HEAP_OFFSET, 8192 + 64 * 1024, 7, 512, 75, 2000, 8192, 1.5);
        Heap h = Heap.create(new MemoryDevice(), small);
        java.util.List<Long> blocks = new java.util.ArrayList<>();
        StoreFullException full = assertThrows(StoreFullException.class, () -> {
            while (true) {
                blocks.add(h.allocate(HeapFixture.payload(blocks.size(), 4000)));
            }
        });
        assertTrue(full.getMessage().contains("no room") && full.getMessage().contains("heap ends at"), full.getMessage());
        h.free(blocks.get(0));
        long again = h.allocate(HeapFixture.payload(99, 4000));
        assertEquals(HeapFixture.payload(99, 4000), h.read(again));
        h.verify();
    }
}
