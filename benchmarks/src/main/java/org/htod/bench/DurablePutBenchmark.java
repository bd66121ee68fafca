package org.htod.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.htod.bench.store.CpuTimes;
import org.htod.bench.store.DiskUsage;
import org.htod.bench.store.DiskWrites;
import org.htod.bench.store.Drain;
import org.htod.bench.store.DurableStores;
import org.htod.bench.store.KeyValueStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Durable puts from many writers: how many puts a second a store makes durable when every put
 * must be on stable storage before it returns, as the number of writer threads grows. The score
 * is puts/s over all threads (throughput mode); the thread count is JMH's {@code -t} (run it at 1,
 * 4, 16 and 64: {@code benchmarks/run.sh durable}).
 *
 * <p>Each thread puts keys chosen uniformly at random among {@code keySpace} keys
 * ({@code /durable/XX/object-N.bin}, 256 directories), with a value of {@code valueSize} random
 * (incompressible) bytes, one of 64 made ahead. The store starts empty at each trial, so early
 * puts insert and, as the key space fills, more of them replace. Stores ({@link DurableStores}):
 * htod in log mode (with values of 1,024 bytes and more placed, too: {@code htod-log-placed}) and
 * in direct mode at htod's own {@code Durability.SYNC}, RocksDB with {@code
 * WriteOptions.setSync(true)}, SQLite in WAL mode with {@code synchronous=FULL} (one connection,
 * so one put at a time), and a file per object written, forced, renamed and its directory forced.
 * What counts is how well a store shares one sync among the writers waiting at the same time.
 * Beside them, {@code disk-dsync} is the disk itself: 4 KiB writes through an {@code O_DSYNC}
 * descriptor, overwriting blocks written before, one a put (what {@code dd oflag=dsync
 * conv=notrunc} measures, here in the same run and harness as the stores), and {@code
 * htod-log-alone} is htod's log without the rest of log mode: each put one record of the bytes a
 * log-mode put logs, made durable by group commit and installed nowhere, so that {@code htod-log}
 * against it is what the write buffer, the installs and the checkpoints cost.
 *
 * <p>Every put is synced before it returns. What a store defers beyond durability (htod's installs
 * into the tables and checkpoints in log mode, RocksDB's memtable flushes and compactions,
 * SQLite's WAL checkpoints, the kernel's writeback) runs in the background or in the writers as it
 * comes due, as it would for a steady writer; what is still deferred when an iteration's writers
 * stop (up to htod's 64 MiB write buffer, RocksDB's 64 MiB memtable and the compactions its flush
 * starts, SQLite's WAL up to its checkpoint) is done by the iteration's end, a drain ({@code
 * Drain}: the store's flush, the work it put off, every file of it forced to disk), timed: each
 * iteration is a {@link DrainedPass} from the store drained to the store drained again. Two
 * scores: JMH's own, puts/s over the iteration's time, which leaves the drain out; and the drained
 * rate, the secondary scores {@code drainedOps / drainedMs} (× 1,000 for puts/s; {@code drainMs}
 * is the drains' part), which counts everything the puts cost and is what {@code DurableReport}'s
 * tables and ratios use. Warmup: 2 × 5 s; measurement: 3 × 10 s; one fork. The store is created
 * under the benchmarks' data directory ({@value StoreParams#DIR_PROPERTY}) at the start of the
 * trial and deleted at its end.
 *
 * <p>At the end of a trial, htod's stores print what their device did (syncs, log groups and the
 * records they carried, bytes written per put) as one {@code durable-io} line; every store its
 * processor time (the process's, the writers', htod's flusher's: {@link CpuTimes}) as a {@code
 * durable-cpu} line and, on Linux, what the disk under it wrote over the trial (bytes and write
 * requests per put, as the kernel counts them, the store's writeback included: {@link
 * DiskWrites}) as a {@code durable-disk} line; all are also appended to the file named by the
 * system property {@value #STATS_PROPERTY} when it is set. The disk's counts are the whole
 * machine's: run on a quiet one.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 5, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 3, time = 10, timeUnit = TimeUnit.SECONDS)
public class DurablePutBenchmark extends StoreBenchmark {

    /** A file to append each trial's {@code durable-io} line to. */
    public static final String STATS_PROPERTY = "htod.bench.durable.stats";

    /** Distinct values made ahead, per trial. */
    static final int VALUES = 64;

    /** The store shared by every writer thread. */
    @State(Scope.Benchmark)
    public static class Target {

        /** Which store: a name from {@link DurableStores#ALL} (the stores, htod's log alone and the disk itself). */
        @Param({"htod-log", "htod-log-placed", "htod-direct", "rocksdb", "sqlite", "file-per-object", "htod-log-alone",
                "disk-dsync"})
        public String store;

        /** Bytes of each value. */
        @Param({"200", "4000"})
        public int valueSize;

        /** How many distinct keys the writers choose among. */
        @Param({"100000"})
        public int keySpace;

        KeyValueStore kv;
        byte[][] keys;
        byte[][] values;
        final LongAdder puts = new LongAdder();
        /**
         * Each writer thread's id and its processor time and time in user mode (ns) when its trial
         * began: the trial's teardown reads their times again, while the threads are still alive.
         */
        final Queue<long[]> writers = new ConcurrentLinkedQueue<>();
        /** The process's processor time when the store had opened (ns), or -1 where the JVM does not count it. */
        private long processBefore = -1;
        private Path dir;
        /** The disk under the store and what it had written when the trial began; empty where unknown. */
        private Optional<DiskWrites> disk = Optional.empty();
        private Optional<DiskWrites.Count> diskBefore = Optional.empty();

        @Setup(Level.Trial)
        public void open() {
            keys = new byte[keySpace][];
            for (int i = 0; i < keySpace; i++) {
                keys[i] = key(i);
            }
            SplittableRandom random = new SplittableRandom(valueSize);
            values = new byte[VALUES][valueSize];
            for (byte[] v : values) {
                random.nextBytes(v);
            }
            Path base = Paths.get(System.getProperty(StoreParams.DIR_PROPERTY, StoreParams.DEFAULT_DIR));
            try {
                Files.createDirectories(base);
                dir = Files.createTempDirectory(base, "durable-" + store + "-" + valueSize + "-");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a store directory under " + base.toAbsolutePath(), e);
            }
            disk = DiskWrites.under(dir);
            diskBefore = disk.flatMap(DiskWrites::read);
            kv = DurableStores.open(store, dir);
            processBefore = CpuTimes.process();
        }

        /** The store is drained (new, or drained at the last iteration's end): the iteration's pass begins. */
        @Setup(Level.Iteration)
        public void beginPass(DrainedPass pass) {
            pass.begin();
        }

        /**
         * Every writer has stopped: the iteration's pass ends with the store drained ({@link
         * Drain}: flushed, what it put off done, its files forced to disk), inside the pass's time.
         */
        @TearDown(Level.Iteration)
        public void drainPass(DrainedPass pass) {
            pass.end(() -> Drain.drain(kv, dir));
        }

        @TearDown(Level.Trial)
        public void closeAndDelete(BenchmarkParams params) {
            closeAndDelete(params.getThreads());
        }

        /** Reports the trial's figures for {@code threads} writers, closes the store and deletes it. */
        void closeAndDelete(int threads) {
            try {
                String io;
                String cpu;
                try {
                    io = DurableStores.ioSummary(kv, puts.sum());
                    cpu = cpuLine(threads);
                } finally {
                    kv.close(); // before anything that may fail to report: an open store is never deleted
                }
                if (io != null) {
                    report("durable-io store=" + store + " valueSize=" + valueSize + " threads=" + threads
                            + " " + io);
                }
                if (cpu != null) {
                    report(cpu);
                }
                reportDisk(threads);
            } finally {
                kv = null;
                DiskUsage.deleteRecursively(dir);
                dir = null;
            }
        }

        /**
         * The {@code durable-cpu} line, or null where the JVM does not count processor time: the
         * processor time of the trial, warmup included, up to the close: the whole process's (every
         * thread: the store's background threads, RocksDB's compactions, the collector and the
         * compilers too), the writer threads' since their trial began (and of it in user mode), and
         * htod's flusher thread's where it has one (and of it in user mode).
         */
        private String cpuLine(int threads) {
            long process = CpuTimes.process();
            if (processBefore < 0 || process < 0) {
                return null;
            }
            long cpu = 0;
            long user = 0;
            for (long[] w : writers) {
                long[] now = CpuTimes.thread(w[0]);
                if (now[0] >= 0 && w[1] >= 0) {
                    cpu += now[0] - w[1];
                    user += now[1] - w[2];
                }
            }
            long[] flusher = CpuTimes.threadsNamed("htod-flusher");
            return String.format(java.util.Locale.ROOT, "durable-cpu store=%s valueSize=%d threads=%d puts=%d"
                    + " processCpuNs=%d writersCpuNs=%d writersUserNs=%d%s", store, valueSize, threads,
                    puts.sum(), process - processBefore, cpu, user,
                    flusher[0] > 0 ? " flusherCpuNs=" + flusher[0] + " flusherUserNs=" + flusher[1] : "");
        }

        /**
         * The {@code durable-disk} line: what the disk wrote over the trial, warmup, close and the
         * writeback of what the store left in the page cache included, for every store alike.
         */
        private void reportDisk(int threads) {
            if (disk.isEmpty() || diskBefore.isEmpty()) {
                return;
            }
            DiskWrites.settle(dir);
            disk.get().read().ifPresent(after -> {
                DiskWrites.Count c = after.since(diskBefore.get());
                long n = Math.max(1, puts.sum());
                report(String.format(java.util.Locale.ROOT, "durable-disk store=%s valueSize=%d threads=%d puts=%d disk=%s"
                        + " diskBytes=%d diskWrites=%d diskBytesPerPut=%.0f diskWritesPerPut=%.3f", store, valueSize,
                        threads, puts.sum(), disk.get().disk(), c.bytes(), c.writes(), (double) c.bytes() / n,
                        (double) c.writes() / n));
            });
        }

        static byte[] key(int i) {
            return String.format("/durable/%02x/object-%d.bin", i & 0xff, i).getBytes(StandardCharsets.UTF_8);
        }

        private static void report(String line) {
            System.out.println(line);
            String file = System.getProperty(STATS_PROPERTY);
            if (file != null) {
                try {
                    Files.writeString(Path.of(file), line + "\n", StandardCharsets.UTF_8,
                            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot append to " + file, e);
                }
            }
        }
    }

    /** Each writer thread's own choice of keys and values. */
    @State(Scope.Thread)
    public static class Writer {
        SplittableRandom random;

        @Setup(Level.Trial)
        public void seed(ThreadParams thread, Target t) {
            random = new SplittableRandom(0x4455_5241_424CL + thread.getThreadIndex());
            long id = Thread.currentThread().getId();
            long[] now = CpuTimes.thread(id);
            t.writers.add(new long[] {id, now[0], now[1]});
        }
    }

    @Benchmark
    public void put(Target t, Writer w, DrainedPass pass, DrainedCounters d) {
        t.kv.put(t.keys[w.random.nextInt(t.keys.length)], t.values[w.random.nextInt(VALUES)]);
        t.puts.increment();
        pass.op();
    }
}
