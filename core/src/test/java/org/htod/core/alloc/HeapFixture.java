package org.htod.core.alloc;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.BlockDevice;

/** Shared set-up for heap tests: options, deterministic payloads, reopen by snapshot or by recovery. */
final class HeapFixture {
    static final long HEAP_OFFSET = 8192;

    private HeapFixture() {}

    static HeapOptions options(StorageMethod method) {
        return HeapOptions.defaults(method, HEAP_OFFSET, 1L << 40, 0x1234_5678_9ABCL);
    }

    static HeapOptions options(StorageMethod method, int grain, int maxQl, int waste, int obaThreshold) {
        return new HeapOptions(method, HEAP_OFFSET, 1L << 40, 0x1234_5678_9ABCL, grain, maxQl, waste, obaThreshold, 1.5);
    }

    /** Payload {@code id} of {@code length} bytes: recognisable, so a misplaced block is caught. */
    static ByteBuffer payload(long id, int length) {
        ByteBuffer b = ByteBuffer.allocate(length);
        SplittableRandom r = new SplittableRandom(id * 0x9E3779B97F4A7C15L + length);
        while (b.remaining() >= 8) {
            b.putLong(r.nextLong());
        }
        while (b.hasRemaining()) {
            b.put((byte) r.nextInt());
        }
        return b.flip();
    }

    /** A size drawn from the paper's truncated Pareto (alpha 1, k = 512, C = 2^10 grains) mixed with small ones. */
    static int size(SplittableRandom r) {
        if (r.nextInt(4) == 0) {
            return r.nextInt(400);
        }
        double k = 512;
        double c = 512.0 * 1024;
        double alpha = 1.0;
        double u = r.nextDouble();
        double x = k * Math.pow(1 - u * (1 - Math.pow(k / c, alpha)), -1 / alpha);
        return (int) Math.min(Math.round(x), 64 * 1024);
    }

    /** Clean close (snapshot) and reopen. */
    static Heap reopenClean(Heap h, BlockDevice dev) {
        Heap.SnapshotRef ref = h.shutdown();
        return Heap.open(dev, h.opt, ref);
    }

    /** Close as a crash after a sync would leave it (no snapshot) and reopen through recovery. */
    static Heap reopenRecovering(Heap h, BlockDevice dev) {
        h.close();
        return Heap.open(dev, h.opt, null);
    }

    /** A seeded run of a randomized test. */
    @FunctionalInterface
    interface SeededRun {
        void run(StorageMethod method, long seed);
    }

    /**
     * Runs {@code test} for {@code count} consecutive seeds from {@code -Dhtod.test.seed} (or the
     * clock), naming the seed and method of a failure so that it can be replayed.
     */
    static void forEachSeed(StorageMethod method, int count, SeededRun test) {
        long base = Long.getLong("htod.test.seed", System.nanoTime());
        for (int i = 0; i < count; i++) {
            long seed = base + i;
            try {
                test.run(method, seed);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("seed=" + seed + " method=" + method + " (replay with -Dhtod.test.seed=" + seed
                        + "): " + e, e);
            }
        }
    }
}
