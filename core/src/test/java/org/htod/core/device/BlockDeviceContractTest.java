package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.htod.core.HtodIOException;
import org.htod.core.StoreClosedException;
import org.htod.core.StoreFullException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The {@link BlockDevice} contract, run against every device by the subclasses below. Each
 * device is made with a finite capacity so that the full-device case can be checked.
 */
abstract class BlockDeviceContractTest {
    static final long CAPACITY = 4L << 20;

    private final List<BlockDevice> opened = new ArrayList<>();

    /** A new, empty device of {@link #CAPACITY} bytes. */
    abstract BlockDevice create() throws Exception;

    BlockDevice device() throws Exception {
        BlockDevice d = create();
        opened.add(d);
        return d;
    }

    @AfterEach
    void closeAll() throws Exception {
        for (BlockDevice d : opened) {
            d.close();
        }
        cleanUp();
    }

    void cleanUp() throws Exception {}

    private static byte[] bytes(SplittableRandom r, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) r.nextInt();
        }
        return b;
    }

    private static byte[] read(BlockDevice d, long pos, int n, boolean direct) {
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
        d.read(pos, b);
        assertEquals(n, b.position(), "read advances the buffer to its limit");
        byte[] out = new byte[n];
        b.flip().get(out);
        return out;
    }

    @Test
    void randomWritesAndReadsMatchAByteArrayModel() throws Exception {
        long seed = System.nanoTime();
        SplittableRandom r = new SplittableRandom(seed);
        BlockDevice d = device();
        int span = 300_000;
        byte[] model = new byte[span];
        int high = 0;
        for (int op = 0; op < 400; op++) {
            int pos = r.nextInt(span - 70_000);
            int len = 1 + r.nextInt(r.nextBoolean() ? 600 : 70_000);
            if (r.nextInt(3) > 0) {
                byte[] data = bytes(r, len);
                ByteBuffer src = r.nextBoolean() ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
                src.put(data).flip();
                if (r.nextBoolean()) {
                    src = src.asReadOnlyBuffer();
                }
                d.write(pos, src);
                assertEquals(0, src.remaining(), "write consumes the buffer, seed=" + seed);
                System.arraycopy(data, 0, model, pos, len);
                high = Math.max(high, pos + len);
            } else if (pos + len <= high) {
                byte[] expected = new byte[len];
                System.arraycopy(model, pos, expected, 0, len);
                assertArrayEquals(expected, read(d, pos, len, r.nextBoolean()), "read at " + pos + " seed=" + seed);
            }
        }
        assertTrue(d.size() >= high && d.size() - high < d.sectorSize(),
                "size is the highest byte written, rounded up to a whole block at most, seed=" + seed);
    }

    @Test
    void aReadNearTheLargestOffsetIsAnErrorNotAWrapAround() throws Exception {
        BlockDevice d = device();
        d.write(0, ByteBuffer.wrap(new byte[100]));
        assertThrows(HtodIOException.class, () -> d.read(Long.MAX_VALUE - 1, ByteBuffer.allocate(4)));
    }

    @Test
    void anEmptyWriteDoesNotGrowTheDevice() throws Exception {
        BlockDevice d = device();
        d.write(0, ByteBuffer.wrap(new byte[10]));
        long before = d.size();
        d.write(100_000, ByteBuffer.allocate(0));
        assertEquals(before, d.size());
    }

    @Test
    void bytesNeverWrittenReadAsZero() throws Exception {
        BlockDevice d = device();
        d.write(200_000, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        assertArrayEquals(new byte[5000], read(d, 70_000, 5000, false));
    }

    @Test
    void aReadPastTheEndIsAnError() throws Exception {
        BlockDevice d = device();
        d.write(0, ByteBuffer.wrap(new byte[100]));
        long end = d.size();
        HtodIOException e = assertThrows(HtodIOException.class, () -> d.read(end - 10, ByteBuffer.allocate(20)));
        assertEquals(true, e.getMessage().contains(String.valueOf(end - 10)), "names the offset: " + e.getMessage());
    }

    @Test
    void aWritePastTheCapacityIsRefusedAndWritesNothing() throws Exception {
        BlockDevice d = device();
        d.write(0, ByteBuffer.wrap(new byte[10]));
        long before = d.size();
        StoreFullException e = assertThrows(StoreFullException.class,
                () -> d.write(CAPACITY - 10, ByteBuffer.wrap(new byte[20])));
        assertEquals(true, e.getMessage().contains(String.valueOf(CAPACITY - 10)), e.getMessage());
        assertEquals(before, d.size(), "nothing was written");
    }

    @Test
    void aClosedDeviceRefusesEverythingAndClosesTwiceQuietly() throws Exception {
        BlockDevice d = device();
        d.write(0, ByteBuffer.wrap(new byte[10]));
        d.close();
        assertThrows(StoreClosedException.class, () -> d.read(0, ByteBuffer.allocate(1)));
        assertThrows(StoreClosedException.class, () -> d.write(0, ByteBuffer.allocate(1)));
        assertThrows(StoreClosedException.class, d::sync);
        assertThrows(StoreClosedException.class, () -> d.writeDurable(0, ByteBuffer.allocate(1)));
        assertThrows(StoreClosedException.class, d::size);
        assertDoesNotThrow(d::close);
    }

    @Test
    void concurrentWritersToDisjointRangesAllLand() throws Exception {
        BlockDevice d = device();
        int chunk = 50_000;
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int id = t;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < 50; i++) {
                        byte[] b = new byte[1000];
                        java.util.Arrays.fill(b, (byte) (id * 50 + i));
                        d.write((long) id * chunk + i * 1000L, ByteBuffer.wrap(b));
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        d.sync();
        for (int t = 0; t < 4; t++) {
            for (int i = 0; i < 50; i++) {
                byte[] expected = new byte[1000];
                java.util.Arrays.fill(expected, (byte) (t * 50 + i));
                assertArrayEquals(expected, read(d, (long) t * chunk + i * 1000L, 1000, false));
            }
        }
    }

    @Test
    void dataSurvivesSync() throws Exception {
        BlockDevice d = device();
        d.write(4096, ByteBuffer.wrap(new byte[] {9, 8, 7}));
        d.sync();
        assertArrayEquals(new byte[] {9, 8, 7}, read(d, 4096, 3, true));
        assertEquals(true, Integer.bitCount(d.sectorSize()) == 1, "sector size is a power of two");
    }

    @Test
    void aDurableWriteLandsAsAWriteDoesAndIsRefusedBeyondTheCapacity() throws Exception {
        BlockDevice d = device();
        SplittableRandom r = new SplittableRandom(7);
        byte[] model = new byte[64 << 10];
        for (int i = 0; i < 200; i++) {
            byte[] data = bytes(r, 1 + r.nextInt(3000));
            int pos = r.nextInt(model.length - data.length);
            ByteBuffer src = ByteBuffer.wrap(data);
            if (r.nextBoolean()) {
                d.writeDurable(pos, src);
            } else {
                d.write(pos, src);
            }
            assertEquals(data.length, src.position(), "the write consumes its buffer");
            System.arraycopy(data, 0, model, pos, data.length);
        }
        d.sync();
        long written = d.size();
        assertArrayEquals(java.util.Arrays.copyOf(model, (int) Math.min(model.length, written)),
                read(d, 0, (int) Math.min(model.length, written), false));
        long cap = d.capacity();
        assertThrows(StoreFullException.class, () -> d.writeDurable(cap - 2, ByteBuffer.wrap(new byte[4])));
    }
}
