import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.StoreStats;
import org.htod.bench.workload.Corpus;

/**
 * A load into a fresh log-mode store at NONE, as {@code WriteBenchmark.wp} writes it (the first
 * OBJECTS objects of the Olympic corpus, then {@code checkpoint()}), counted: the write layer's
 * installs, doubling steps, checkpoints and group commits, and the seconds the writer waited for
 * room in the log, during the puts and in the checkpoint that installs the rest. As run for
 * README.md beside it: {@code java @benchmarks/jvm-flags.txt -cp benchmarks/target/benchmarks.jar
 * benchmarks/results/load-doublings-2core/LoadCounts.java 27800 3}. The times it prints are one
 * load each, not a benchmark: {@code WriteBenchmark.wp} times the load.
 */
public class LoadCounts {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        Corpus corpus = Corpus.named("olympic");
        byte[][] keys = new byte[n][];
        byte[][] values = new byte[n][];
        for (int i = 0; i < n; i++) {
            keys[i] = corpus.key(i);
            values[i] = corpus.value(i, 0);
        }
        Path base = Paths.get("benchmarks/target/bench-data");
        Files.createDirectories(base);
        for (int r = 0; r < rounds; r++) {
            Path dir = Files.createTempDirectory(base, "load-counts-");
            try (HtodStore s = Htod.builder(dir.resolve("store.htod")).durability(Durability.NONE).open()) {
                HtodMap<byte[], byte[]> m = s.map("objects", Codec.bytes(), Codec.bytes());
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    m.set(keys[i], values[i]);
                }
                long t1 = System.nanoTime();
                StoreStats.WriteLayerFigures p = s.stats().writeLayer();
                s.checkpoint();
                long t2 = System.nanoTime();
                StoreStats.WriteLayerFigures f = s.stats().writeLayer();
                System.out.printf("puts %d ms: installs %d, doubling steps %d, checkpoints %d, log waits %.2f s;"
                        + " checkpoint() %d ms: installs %d, doubling steps %d, checkpoints %d; group commits %d%n",
                        (t1 - t0) / 1_000_000, p.installs(), p.doublingSteps(), p.checkpoints(), p.logWaitSeconds(),
                        (t2 - t1) / 1_000_000, f.installs() - p.installs(), f.doublingSteps() - p.doublingSteps(),
                        f.checkpoints() - p.checkpoints(), f.groupCommits());
            }
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }
    }
}
