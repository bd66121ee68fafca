package org.htod.bench.alloc;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.htod.bench.workload.TruncatedPareto;
import org.htod.core.alloc.Heap;
import org.htod.core.alloc.HeapOptions;
import org.htod.core.alloc.HeapVerifyReport;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;

/**
 * The core paper's fragmentation experiment (§3.3, Figs. 14-18): {@code n} objects created with
 * truncated Pareto sizes (k = one grain), then {@code N} replacements (free a random object,
 * create a new one), then internal, external and total fragmentation as §3.3.1 defines them,
 * measured exactly by scanning the heap, beside a plain first-fit allocator fed the same requests.
 * It measures space, not time, so it is a plain program rather than a JMH benchmark.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar org.htod.bench.alloc.FragmentationExperiment [--full]
 * </pre>
 */
public final class FragmentationExperiment {
    private static final int GRAIN = 512;
    private static final int HEADER = 48;

    private FragmentationExperiment() {}

    public static void main(String[] args) {
        boolean full = args.length > 0 && args[0].equals("--full");
        int n = full ? 100_000 : 20_000;
        int replacements = full ? 500_000 : 100_000;
        double[] alphas = {0.9, 1.0, 1.2, 1.5};
        int[] cutoffLog2Grains = full ? new int[] {6, 8, 10, 12, 14, 16} : new int[] {6, 10, 14};
        System.out.printf("# Fragmentation after %,d creations and %,d replacements (grain %d, maxQL 75, w 2000; TS)%n%n",
                n, replacements, GRAIN);
        System.out.println("| alpha | C (grains) | mean size | PMFLF f_i | PMFLF f_e | PMFLF f_t | first fit f_i | first fit f_e | first fit f_t |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        for (double alpha : alphas) {
            for (int lg : cutoffLog2Grains) {
                TruncatedPareto sizes = new TruncatedPareto(alpha, GRAIN, (double) GRAIN * (1L << lg));
                Row r = run(sizes, n, replacements, 42);
                System.out.printf("| %.1f | 2^%d | %.0f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |%n", alpha, lg, sizes.mean(),
                        r.pmflf.internalFragmentation(), r.pmflf.externalFragmentation(), r.pmflf.totalFragmentation(),
                        r.firstFit.internal(), r.firstFit.external(), r.firstFit.internal() * r.firstFit.external());
            }
        }
        System.out.println();
        System.out.println("# Scale (alpha 1.0, C = 2^10 grains; paper Figs. 17-18)");
        System.out.println();
        System.out.println("| objects | replacements | PMFLF f_e | PMFLF f_t | first fit f_e | first fit f_t |");
        System.out.println("|---|---|---|---|---|---|");
        TruncatedPareto sizes = new TruncatedPareto(1.0, GRAIN, GRAIN * 1024.0);
        for (int objects : full ? new int[] {1_000, 10_000, 100_000} : new int[] {1_000, 10_000}) {
            Row r = run(sizes, objects, 5 * objects, 7);
            System.out.printf("| %,d | %,d | %.3f | %.3f | %.3f | %.3f |%n", objects, 5 * objects,
                    r.pmflf.externalFragmentation(), r.pmflf.totalFragmentation(), r.firstFit.external(),
                    r.firstFit.internal() * r.firstFit.external());
        }
    }

    private record Row(HeapVerifyReport pmflf, FirstFit firstFit) {}

    private static Row run(TruncatedPareto sizes, int n, int replacements, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        MemoryDevice dev = new MemoryDevice();
        Heap heap = Heap.create(dev, HeapOptions.defaults(StorageMethod.TS, 8192, 1L << 40, seed));
        FirstFit ff = new FirstFit(GRAIN);
        List<long[]> live = new ArrayList<>(n); // heap handle, first-fit address, request bytes
        for (int i = 0; i < n; i++) {
            live.add(create(heap, ff, sizes.sample(r)));
        }
        for (int i = 0; i < replacements; i++) {
            int victim = r.nextInt(live.size());
            long[] v = live.get(victim);
            heap.free(v[0]);
            ff.free(v[1], v[2]);
            live.set(victim, create(heap, ff, sizes.sample(r)));
        }
        HeapVerifyReport report = heap.verify();
        heap.close();
        return new Row(report, ff);
    }

    private static long[] create(Heap heap, FirstFit ff, int size) {
        int payload = Math.max(0, size - HEADER);
        long handle = heap.allocate(ByteBuffer.allocate(payload));
        return new long[] {handle, ff.allocate(HEADER + payload), HEADER + payload};
    }
}
