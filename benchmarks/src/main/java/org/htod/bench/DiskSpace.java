package org.htod.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.htod.bench.store.DiskUsage;
import org.htod.bench.store.Durability;
import org.htod.bench.store.KeyValueStore;
import org.htod.bench.store.Stores;
import org.htod.bench.workload.Corpus;

/**
 * The paper's Table 3, disk space usage: loads a corpus into each store, optionally runs the
 * replacements of Table 1's experiment (remove a random object, write a new one), and reports the
 * bytes the store's files take, both as their apparent sizes ({@link KeyValueStore#diskBytes()})
 * and as blocks allocated ({@code du}), beside the bytes of keys and values it holds.
 *
 * <pre>
 * java @benchmarks/jvm-flags.txt -cp benchmarks/target/benchmarks.jar org.htod.bench.DiskSpace \
 *     [--corpus olympic|proxy|all] [--objects N] [--replacements N] [--durability NONE|SYNC] [--stores a,b,...]
 * </pre>
 *
 * Defaults: both corpora at the paper's object counts (27,800 and 100,000), no replacements, NONE,
 * every store. The paper's NT setup is {@code --corpus proxy --objects 100000 --replacements 20000}.
 */
public final class DiskSpace {

    private DiskSpace() {}

    public static void main(String[] args) throws IOException {
        List<Corpus> corpora = new ArrayList<>(Corpus.ALL);
        long objects = -1;
        long replacements = 0;
        Durability durability = Durability.NONE;
        List<String> stores = new ArrayList<>(Stores.names());
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--corpus":
                    corpora = "all".equals(v) ? new ArrayList<>(Corpus.ALL) : List.of(Corpus.named(v));
                    i++;
                    break;
                case "--objects":
                    objects = Long.parseLong(v);
                    i++;
                    break;
                case "--replacements":
                    replacements = Long.parseLong(v);
                    i++;
                    break;
                case "--durability":
                    durability = Durability.valueOf(v);
                    i++;
                    break;
                case "--stores":
                    stores = List.of(v.split(","));
                    i++;
                    break;
                default:
                    System.err.println("unknown argument " + a + "; see the class comment of " + DiskSpace.class.getName());
                    System.exit(2);
                    return;
            }
        }
        Path base = Paths.get(System.getProperty(StoreParams.DIR_PROPERTY, StoreParams.DEFAULT_DIR));
        Files.createDirectories(base);
        PrintStream out = System.out;
        out.printf(Locale.ROOT, "%-16s %-8s %9s %12s %14s %14s %14s %8s%n", "store", "corpus", "objects",
                "replacements", "payload B", "apparent B", "allocated B", "alloc/pay");
        for (Corpus corpus : corpora) {
            long n = objects > 0 ? objects : corpus.paperObjects();
            for (String store : stores) {
                if (!Stores.supports(store, durability)) {
                    out.printf(Locale.ROOT, "%-16s %-8s   (does not support %s)%n", store, corpus.name(), durability);
                    continue;
                }
                Path dir = Files.createTempDirectory(base, "space-" + store + "-" + corpus.name() + "-");
                try {
                    Row row = measure(store, corpus, n, replacements, durability, dir);
                    out.printf(Locale.ROOT, "%-16s %-8s %9d %12d %14d %14d %14d %8.2f%n", store, corpus.name(), n,
                            replacements, row.payload, row.apparent, row.allocated,
                            row.allocated < 0 ? Double.NaN : (double) row.allocated / row.payload);
                } finally {
                    DiskUsage.deleteRecursively(dir);
                }
            }
        }
    }

    private record Row(long payload, long apparent, long allocated) {}

    private static Row measure(String store, Corpus corpus, long n, long replacements, Durability durability,
            Path dir) {
        long payload = 0;
        try (KeyValueStore kv = Stores.open(store, dir, durability, corpus.sizingHint(n))) {
            long[] live = new long[Math.toIntExact(n)];
            for (int i = 0; i < n; i++) {
                byte[] k = corpus.key(i);
                byte[] v = corpus.value(i, 0);
                kv.put(k, v);
                payload += k.length + v.length;
                live[i] = i;
            }
            SplittableRandom random = new SplittableRandom(0x5350414345L);
            long next = n;
            for (long r = 0; r < replacements; r++) {
                int slot = random.nextInt(live.length);
                byte[] oldKey = corpus.key(live[slot]);
                payload -= oldKey.length + corpus.size(live[slot], 0);
                kv.remove(oldKey);
                byte[] k = corpus.key(next);
                byte[] v = corpus.value(next, 0);
                kv.put(k, v);
                payload += k.length + v.length;
                live[slot] = next++;
            }
            kv.flush();
        }
        // Measured after close, when every store has written what it buffers.
        return new Row(payload, DiskUsage.apparentBytes(dir), DiskUsage.allocatedBytes(dir));
    }
}
