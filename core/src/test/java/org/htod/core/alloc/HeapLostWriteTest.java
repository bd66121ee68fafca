package org.htod.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.ForwardingDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Power loss that drops exactly one of the writes since the last sync and keeps all the others,
 * tried for every such write: the crashes a random power cut reaches only by luck. After each,
 * the heap must recover, pass its verifier, and hold every synced block allocated and whole.
 * Fixed seeds, printed with a failure.
 */
class HeapLostWriteTest {
    private static final int SEEDS = 6 * Integer.getInteger("htod.test.scale", 1);

    /** Keeps the device's bytes at the last sync and the data of every write since, in order. */
    private static final class Recorder extends ForwardingDevice {
        final List<Long> at = new ArrayList<>();
        final List<byte[]> data = new ArrayList<>();
        byte[] image = new byte[0];

        Recorder(BlockDevice inner) {
            super(inner);
        }

        @Override
        public synchronized void write(long pos, ByteBuffer src) {
            byte[] b = new byte[src.remaining()];
            src.duplicate().get(b);
            at.add(pos);
            data.add(b);
            super.write(pos, src);
        }

        @Override
        public synchronized void sync() {
            super.sync();
            ByteBuffer b = ByteBuffer.allocate(Math.toIntExact(inner.size()));
            inner.read(0, b);
            image = b.array();
            at.clear();
            data.clear();
        }
    }

    /**
     * The case rule 2 of the heap's crash safety is for: a block split off a durable free block,
     * freed, and asked for again smaller, before any sync. Were it split again, the write that
     * split it and the one that defined it would both be pending; losing the first leaves behind
     * the new split a header nothing wrote, and the blocks after it, synced long ago, out of the
     * heap.
     */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void aBlockSplitSinceTheLastSyncIsNotSplitAgain(StorageMethod method) {
        Recorder dev = new Recorder(new MemoryDevice());
        HeapOptions opt = HeapFixture.options(method, 64, 4, 0, 1 << 20); // one misc list holds 5120..10239
        Heap h = Heap.create(dev, opt);
        long big = h.allocate(HeapFixture.payload(1, 10112 - BlockHeader.SIZE));
        long after = h.allocate(HeapFixture.payload(2, 100));
        h.free(big);
        h.sync();
        long x = h.allocate(HeapFixture.payload(3, 7040 - BlockHeader.SIZE)); // split off the free block
        assertEquals(h.address(big), h.address(x));
        h.free(x);
        h.allocate(HeapFixture.payload(4, 5120 - BlockHeader.SIZE)); // same list: x would do, if split
        everyLostWrite(dev, opt, Map.of(after, new long[] {2, 100}));
    }

    /**
     * Bursts of allocations and frees with no sync, on a fragmented heap with a small acceptable
     * waste: blocks split a lot, and blocks just allocated are freed and their space asked for
     * again.
     */
    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void anyOneLostWriteOfABurstLeavesEverySyncedBlockWhole(StorageMethod method) {
        for (int i = 0; i < SEEDS; i++) {
            long seed = 0x1057_0000L + i;
            try {
                burst(method, seed);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("seed=0x" + Long.toHexString(seed) + " method=" + method + ": " + e, e);
            }
        }
    }

    private static void burst(StorageMethod method, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        Recorder dev = new Recorder(new MemoryDevice());
        HeapOptions opt = HeapFixture.options(method, 64, 4 + r.nextInt(12), r.nextInt(200), 1 << 20);
        Heap h = Heap.create(dev, opt);
        Map<Long, long[]> live = new HashMap<>();
        List<Long> handles = new ArrayList<>();
        long id = 1;
        for (int op = 0; op < 400; op++) { // a fragmented heap: blocks of all sizes, about half freed
            if (handles.isEmpty() || r.nextInt(100) < 60) {
                int len = 50 + r.nextInt(12_000);
                long hd = h.allocate(HeapFixture.payload(id, len));
                live.put(hd, new long[] {id++, len});
                handles.add(hd);
            } else {
                long hd = handles.remove(r.nextInt(handles.size()));
                live.remove(hd);
                h.free(hd);
            }
            if (r.nextInt(50) == 0) {
                h.sync();
            }
        }
        h.sync();
        Map<Long, long[]> synced = new HashMap<>(live);
        List<Long> recent = new ArrayList<>();
        for (int op = 0; op < 40; op++) {
            int dice = r.nextInt(100);
            if (dice < 45 || recent.isEmpty()) {
                recent.add(h.allocate(HeapFixture.payload(id++, 50 + r.nextInt(12_000))));
            } else if (dice < 85) {
                h.free(recent.remove(recent.size() - 1 - r.nextInt(Math.min(3, recent.size())))); // just allocated
            } else if (!handles.isEmpty()) {
                long hd = handles.remove(r.nextInt(handles.size()));
                synced.remove(hd); // its free may be lost or kept
                h.free(hd);
            }
        }
        everyLostWrite(dev, opt, synced);
    }

    /**
     * For each write since the last sync, a crash that loses it alone: the heap must recover and
     * verify, and hold every block of {@code synced} allocated and whole.
     */
    private static void everyLostWrite(Recorder dev, HeapOptions opt, Map<Long, long[]> synced) {
        for (int lost = 0; lost < dev.at.size(); lost++) {
            MemoryDevice crashed = new MemoryDevice();
            crashed.write(0, ByteBuffer.wrap(dev.image));
            for (int k = 0; k < dev.at.size(); k++) {
                if (k != lost) {
                    crashed.write(dev.at.get(k), ByteBuffer.wrap(dev.data.get(k)));
                }
            }
            String context = "write " + lost + " of " + dev.at.size() + " since the last sync lost ("
                    + dev.data.get(lost).length + " bytes at offset " + dev.at.get(lost) + ")";
            Heap back;
            Set<Long> allocated = new HashSet<>();
            try {
                back = Heap.open(crashed, opt, null);
                back.verify();
                back.forEachAllocated((handle, length) -> allocated.add(handle));
            } catch (RuntimeException e) {
                throw new AssertionError(context + ": " + e, e);
            }
            for (Map.Entry<Long, long[]> e : synced.entrySet()) {
                long[] m = e.getValue();
                assertTrue(allocated.contains(e.getKey()), "synced block " + Long.toHexString(e.getKey())
                        + " is no longer a block of the heap, " + context);
                assertEquals(HeapFixture.payload(m[0], (int) m[1]), back.read(e.getKey()),
                        "synced block " + Long.toHexString(e.getKey()) + ", " + context);
            }
        }
    }
}
