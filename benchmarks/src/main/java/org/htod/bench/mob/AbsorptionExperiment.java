package org.htod.bench.mob;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodMetrics;
import org.htod.HtodStore;
import org.htod.bench.StoreParams;
import org.htod.bench.store.DiskUsage;

/**
 * Write absorption of the write buffer measured against the model of the MOB thesis
 * ({@code 001_…txt}, §4.3.2, Eq. 4.3). It counts entry writes, not time, so it is a plain program
 * rather than a JMH benchmark.
 *
 * <p>The thesis installs pages; htod installs a key's entry, so a "page" is one key: {@code p = c
 * = 1}, {@code μ = 1}, and Eq. 4.3 gives {@code 1 - λ} installs per update of a uniform workload,
 * {@code λ = n / s} the share of the {@code s} keys the buffer holds ({@code n} keys). For a
 * skewed workload the thesis treats the keys as a mixture of uniform workloads; taken to each
 * key, with an oldest-first buffer of {@code n} keys where a key stays for {@code T} updates after
 * its first change (later changes absorbed) and update {@code k} goes to key {@code k} with
 * probability {@code q}, the buffer holds {@code n = Σ T q / (1 + T q)} keys and makes {@code Σ q /
 * (1 + T q)} installs per update; with every {@code q = 1/s} that is Eq. 4.3 again. {@code n} is
 * measured (the mean of the buffered-keys gauge, sampled every 1,000 updates), {@code T} solved
 * from it, the installs per update predicted and compared with those counted.
 *
 * <p>Each row: a new store (a file under the benchmarks' data directory, durability NONE, one
 * writer), its {@code s} keys of 100-byte values loaded and installed, a warmup of {@code 2s}
 * updates, then the measured updates; the workloads are uniform and hot/cold (a fifth of the
 * keys taking four fifths of the updates).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar org.htod.bench.mob.AbsorptionExperiment [--quick]
 * </pre>
 */
public final class AbsorptionExperiment {
    private static final int VALUE = 100;

    private AbsorptionExperiment() {}

    /** How update {@code i} chooses its key among {@code s}. */
    interface Workload {
        int next(SplittableRandom r, int s);

        /** The probability that an update goes to key {@code k}. */
        double q(int k, int s);
    }

    static final Workload UNIFORM = new Workload() {
        @Override
        public int next(SplittableRandom r, int s) {
            return r.nextInt(s);
        }

        @Override
        public double q(int k, int s) {
            return 1.0 / s;
        }
    };

    /** A fifth of the keys (the first) take four fifths of the updates, uniformly among them. */
    static final Workload HOT_COLD = new Workload() {
        @Override
        public int next(SplittableRandom r, int s) {
            int hot = s / 5;
            return r.nextDouble() < 0.8 ? r.nextInt(hot) : hot + r.nextInt(s - hot);
        }

        @Override
        public double q(int k, int s) {
            int hot = s / 5;
            return k < hot ? 0.8 / hot : 0.2 / (s - hot);
        }
    };

    record Row(String workload, long bufferBytes, double meanKeys, double lambda, double measured, double predicted,
            double absorbed) {}

    public static void main(String[] args) {
        boolean quick = args.length > 0 && args[0].equals("--quick");
        int s = quick ? 50_000 : 200_000;
        long updates = quick ? 200_000 : 1_000_000;
        long[] buffers = quick ? new long[] {1L << 20, 4L << 20} : new long[] {2L << 20, 4L << 20, 8L << 20, 16L << 20};
        Map<String, Workload> workloads = new LinkedHashMap<>();
        workloads.put("uniform", UNIFORM);
        workloads.put("hot/cold 80/20", HOT_COLD);
        Path base = Paths.get(System.getProperty(StoreParams.DIR_PROPERTY, StoreParams.DEFAULT_DIR));
        System.out.printf(Locale.ROOT, "# Write absorption: %,d keys of %d-byte values, %,d updates measured after %,d,"
                + " durability NONE, one writer%n%n", s, VALUE, updates, 2L * s);
        System.out.println("| workload | buffer | mean buffered keys n | λ = n/s | installs per update, counted"
                + " | predicted by the model | Eq. 4.3 at this λ (uniform) | changes absorbed |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
        for (Map.Entry<String, Workload> w : workloads.entrySet()) {
            for (long buffer : buffers) {
                Row r = run(base, w.getKey(), w.getValue(), s, buffer, updates);
                System.out.printf(Locale.ROOT, "| %s | %d MiB | %,.0f | %.3f | %.3f | %.3f | %.3f | %.1f%% |%n",
                        r.workload, r.bufferBytes >> 20, r.meanKeys, r.lambda, r.measured, r.predicted, 1 - r.lambda,
                        100 * r.absorbed);
            }
        }
    }

    static Row run(Path base, String name, Workload w, int s, long buffer, long updates) {
        Path dir;
        try {
            Files.createDirectories(base);
            dir = Files.createTempDirectory(base, "absorption-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a store directory under " + base, e);
        }
        try (HtodStore store = Htod.builder(dir.resolve("absorption.htod")).durability(Durability.NONE)
                .bufferSize(buffer).open()) {
            HtodMap<byte[], byte[]> m = store.map("m", Codec.bytes(), Codec.bytes());
            byte[][] keys = new byte[s][];
            SplittableRandom r = new SplittableRandom(0xab50_4b71L);
            byte[][] values = new byte[64][VALUE];
            for (byte[] v : values) {
                r.nextBytes(v);
            }
            for (int k = 0; k < s; k++) {
                keys[k] = String.format("/absorption/%07d", k).getBytes(StandardCharsets.UTF_8);
                m.put(keys[k], values[k & 63]);
            }
            store.checkpoint(); // every key installed: the buffer starts empty
            for (long i = 0; i < 2L * s; i++) {
                m.put(keys[w.next(r, s)], values[r.nextInt(64)]);
            }
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new HtodMetrics(store).bindTo(registry);
            double changes0 = counter(registry, "htod.buffer.changes");
            double absorbed0 = counter(registry, "htod.buffer.absorbed");
            double installed0 = counter(registry, "htod.installed.keys");
            double keysSum = 0;
            long samples = 0;
            for (long i = 0; i < updates; i++) {
                m.put(keys[w.next(r, s)], values[r.nextInt(64)]);
                if (i % 1000 == 0) {
                    keysSum += registry.find("htod.buffer.keys").gauge().value();
                    samples++;
                }
            }
            double changes = counter(registry, "htod.buffer.changes") - changes0;
            double absorbed = counter(registry, "htod.buffer.absorbed") - absorbed0;
            double installed = counter(registry, "htod.installed.keys") - installed0;
            double n = keysSum / samples;
            return new Row(name, buffer, n, n / s, installed / updates, predicted(w, s, n), absorbed / changes);
        } finally {
            DiskUsage.deleteRecursively(dir);
        }
    }

    private static double counter(SimpleMeterRegistry registry, String name) {
        return registry.find(name).functionCounter().count();
    }

    /**
     * Installs per update the model predicts for a buffer holding {@code n} keys on average: {@code
     * T} solved from {@code n = Σ T q / (1 + T q)} by bisection, then {@code Σ q / (1 + T q)}, which
     * is that same sum over {@code T}: {@code n / T} (Little's law: {@code n} keys, each leaving
     * after {@code T} updates).
     */
    static double predicted(Workload w, int s, double n) {
        if (n <= 0) {
            return 1;
        }
        double lo = 0;
        double hi = 1;
        while (held(w, s, hi) < n) {
            hi *= 2;
            if (hi > 1e15) {
                return 0; // the buffer holds every key the workload touches
            }
        }
        for (int i = 0; i < 100; i++) {
            double mid = (lo + hi) / 2;
            if (held(w, s, mid) < n) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return n / ((lo + hi) / 2);
    }

    /** Keys an oldest-first buffer holds when each stays {@code t} updates after its first change. */
    private static double held(Workload w, int s, double t) {
        double sum = 0;
        for (int k = 0; k < s; k++) {
            double q = w.q(k, s);
            sum += t * q / (1 + t * q);
        }
        return sum;
    }
}
