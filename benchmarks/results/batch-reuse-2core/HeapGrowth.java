import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.StoreStats;

/**
 * The heap of a log-mode store under steady replacements, as the durable-put benchmark writes
 * them (keys uniform over 100,000, one of 64 random values): each second, puts/s, entries, and
 * the heap's extent, free and allocated bytes. As run for README.md beside it:
 * {@code java -cp benchmarks/target/benchmarks.jar benchmarks/results/batch-reuse-2core/HeapGrowth.java
 * THREADS VALUE_BYTES SECONDS DURABILITY}.
 */
public class HeapGrowth {
    private static volatile boolean stop;

    public static void main(String[] a) throws Exception {
        int threads = Integer.parseInt(a[0]);
        int size = Integer.parseInt(a[1]);
        int secs = Integer.parseInt(a[2]);
        Path dir = Files.createTempDirectory("heap-growth");
        Path file = dir.resolve("store.htod");
        try (HtodStore store = Htod.builder(file).durability(Durability.valueOf(a[3])).open()) {
            HtodMap<byte[], byte[]> map = store.map("objects", Codec.bytes(), Codec.bytes());
            int keySpace = 100_000;
            byte[][] keys = new byte[keySpace][];
            for (int i = 0; i < keySpace; i++) {
                keys[i] = String.format("/durable/%02x/object-%d.bin", i & 0xff, i).getBytes(StandardCharsets.UTF_8);
            }
            byte[][] values = new byte[64][size];
            SplittableRandom seed = new SplittableRandom(size);
            for (byte[] v : values) {
                seed.nextBytes(v);
            }
            LongAdder puts = new LongAdder();
            Thread[] writers = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                SplittableRandom r = new SplittableRandom(t);
                writers[t] = new Thread(() -> {
                    while (!stop) {
                        map.put(keys[r.nextInt(keySpace)], values[r.nextInt(64)]);
                        puts.increment();
                    }
                });
                writers[t].start();
            }
            long last = 0;
            for (int s = 1; s <= secs; s++) {
                Thread.sleep(1000);
                long p = puts.sum();
                StoreStats st = store.stats();
                System.out.printf("t=%3d puts/s=%7d entries=%6d heap=%4d MB free=%4d MB allocated=%4d MB%n", s, p - last,
                        st.totalEntries(), st.space().heapUsedBytes() >> 20, st.space().freeBytes() >> 20,
                        st.space().allocatedBytes() >> 20);
                last = p;
            }
            stop = true;
            for (Thread t : writers) {
                t.join();
            }
        } finally {
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
    }
}
