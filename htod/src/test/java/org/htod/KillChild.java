package org.htod;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * The process {@link ProcessKillTest} kills: opens the store in a file at durability SYNC and runs
 * writer threads, each on keys of its own, until it is killed. Each thread's operations come from
 * {@link Ops}, seeded by the test's seed, the round and the thread, so the parent that reads the
 * acknowledgements regenerates them. After each operation returns its thread writes {@code "t
 * n ."} (thread, operation number) to stdout in one flushed write; the trailing dot tells a whole
 * line from a torn one. {@code "open"} comes before the store is opened, {@code "ready"} after.
 *
 * <p>Arguments: store file, seed, round, threads, keys per thread.
 */
final class KillChild {
    static final String MAP = "kill";

    private KillChild() {}

    /** One operation on one key: what it does to the key's value, and how it runs on a map. */
    record Op(int kind, String key, String value, long n) {
        static final int KINDS = 10;

        /** The key's value after this operation, given the value before (null: absent). */
        String after(String before) {
            return switch (kind) {
                case 0, 1, 2, 3 -> value; // put, over a value or not
                case 4 -> before != null ? value : null; // replace
                case 5, 6 -> null; // remove
                case 7 -> grown(before); // compute
                case 8 -> before != null ? before : value; // putIfAbsent
                default -> value; // put of a value of several sectors
            };
        }

        private String grown(String before) {
            return before == null || before.length() > 400 ? value : before + "+" + n;
        }

        /** Runs the operation; returns the value it saw before it, as {@link #token} writes it. */
        String run(HtodMap<String, String> m) {
            String[] seen = new String[1];
            String before = switch (kind) {
                case 0, 1, 2, 3, 9 -> m.put(key, value);
                case 4 -> m.replace(key, value);
                case 5, 6 -> m.remove(key);
                case 7 -> {
                    m.compute(key, (k, b) -> {
                        seen[0] = b; // the last call's view is the one applied
                        return grown(b);
                    });
                    yield seen[0];
                }
                case 8 -> m.putIfAbsent(key, value);
                default -> throw new IllegalStateException("kind " + kind);
            };
            return token(before);
        }

        /** A value as the child reports it: the operation that wrote it ({@code r3t1n17}), or {@code -} for none. */
        static String token(String value) {
            return value == null ? "-" : value.substring(0, value.indexOf('-'));
        }
    }

    /** A thread's operations in one round: the same sequence in the child and in the parent. */
    static final class Ops {
        private final SplittableRandom r;
        private final String prefix;
        private final int thread;
        private final int keys;
        private long n;
        private Op peeked;

        Ops(long seed, int round, int thread, int keys) {
            this.r = new SplittableRandom(seed ^ (round * 0x9E3779B97F4A7C15L) ^ (thread * 0xC2B2AE3D27D4EB4FL));
            this.prefix = "r" + round + "t" + thread + "n";
            this.thread = thread;
            this.keys = keys;
        }

        static String key(int thread, int i) {
            return "t" + thread + "-" + i;
        }

        /** The next operation, which {@link #next()} then returns. */
        Op peek() {
            if (peeked == null) {
                int kind = r.nextInt(Op.KINDS);
                String key = key(thread, r.nextInt(keys));
                int pad = kind == 9 ? 1500 + r.nextInt(5000) : r.nextInt(40);
                peeked = new Op(kind, key, prefix + n + "-" + "x".repeat(pad), n);
            }
            return peeked;
        }

        Op next() {
            Op op = peek();
            peeked = null;
            n++;
            return op;
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Path file = Path.of(args[0]);
        long seed = Long.parseLong(args[1]);
        int round = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[3]);
        int keys = Integer.parseInt(args[4]);
        OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 256);
        line(out, "open");
        HtodStore store = Htod.builder(file).createIfMissing(false).durability(Durability.SYNC).open();
        HtodMap<String, String> m = store.map(MAP, Codec.string(), Codec.string());
        line(out, "ready");
        Thread[] writers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int thread = t;
            writers[t] = new Thread(() -> {
                Ops ops = new Ops(seed, round, thread, keys);
                try {
                    while (true) {
                        Op op = ops.next();
                        String seen = op.run(m);
                        line(out, thread + " " + op.n() + " " + seen + " .");
                    }
                } catch (RuntimeException | Error e) {
                    e.printStackTrace();
                    Runtime.getRuntime().halt(3); // not killed: the parent reports it
                }
            }, "writer-" + t);
            writers[t].start();
        }
        for (Thread w : writers) {
            w.join(); // until killed
        }
    }

    /**
     * Starts {@code main} in a child JVM of the test's class path, with a heap of {@code heapMb} MiB
     * and the quickest start (serial GC, C1 only), its stdout to {@code out} and stderr to {@code
     * err}: a process a kill test kills.
     */
    static Process start(Class<?> main, int heapMb, Path out, Path err, String... args) throws IOException {
        java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx" + heapMb + "m",
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                main.getName()));
        cmd.addAll(java.util.List.of(args));
        return new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    }

    /** One line in one write, so that a kill tears no line but the last, and that one visibly. */
    static void line(OutputStream out, String s) {
        synchronized (out) {
            try {
                out.write((s + "\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
            } catch (IOException e) {
                Runtime.getRuntime().halt(4); // the parent went away
            }
        }
    }
}
