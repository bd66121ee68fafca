package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.htod.KillChild.Op;
import org.htod.KillChild.Ops;
import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * kill -9 in the middle of writes: a child JVM ({@link KillChild}) writes to a store in a file at
 * durability SYNC from several threads, each on keys of its own (puts over a value or not,
 * replaces, removes, compute, putIfAbsent), and reports each operation once it has returned. The
 * test reads the reports, SIGKILLs the child at a seeded point (after a seeded number of reports,
 * or while the child opens and recovers the store), reopens the store and checks that every key
 * holds the value of its last reported operation, or that of the one operation its thread had in
 * flight; that iteration and size agree; that the store verifies. Each report also says what
 * value the operation saw before it, which must be what the acknowledged operations left: the
 * child reads its own writes, across the kills too. The same store goes on from
 * round to round. {@code -Dhtod.test.seed} replays the operations and kill points (not the
 * timing); {@code -Dhtod.test.scale=N} runs N times the rounds.
 */
@ExtendWith(VerifyStores.class)
class ProcessKillTest {
    private static final int ROUNDS = 100 * TestStores.scale();
    private static final int THREADS = 3;
    private static final int KEYS = 40;
    /** SIGKILL's exit status: 128 + 9. */
    private static final int KILLED = 137;
    private static final String EOF = "(end of output)";
    private static final String READ_FAILED = "(the child's output could not be read: ";

    private static final class Figures {
        int kills;
        int killedWhileOpening;
        long acks;
        int inFlightApplied;
        int inFlightNotApplied;
        int inFlightNoChange;
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES) // 100 child JVMs: a minute or two alone, more on a busy machine
    void everyAcknowledgedOperationSurvivesSigkill(OpenedStores stores) throws Exception {
        long seed = Long.getLong("htod.test.seed", System.nanoTime());
        Path file = stores.newFile("kill");
        Path err = file.resolveSibling(file.getFileName() + ".stderr");
        Path out = file.resolveSibling(file.getFileName() + ".stdout");
        try (HtodStore s = Htod.builder(file).durability(Durability.SYNC).open()) {
            s.map(KillChild.MAP, Codec.string(), Codec.string());
        }
        Map<String, String> model = new HashMap<>();
        Figures f = new Figures();
        try {
            for (int round = 0; round < ROUNDS; round++) {
                try {
                    round(seed, round, file, out, err, model, f);
                } catch (Throwable e) {
                    throw new AssertionError("seed=" + seed + " round=" + round + ": " + e, e);
                }
            }
        } finally {
            Files.deleteIfExists(err);
            Files.deleteIfExists(out);
        }
        stores.track(Htod.builder(file).createIfMissing(false).open(), file).close(); // verified after the test
        System.out.println("ProcessKillTest seed=" + seed + ": " + f.kills + " kills (" + f.killedWhileOpening
                + " while the store opened), " + f.acks + " operations acknowledged; of the operations in flight "
                + f.inFlightApplied + " were applied, " + f.inFlightNotApplied + " were not, " + f.inFlightNoChange
                + " changed nothing either way");
        assertEquals(ROUNDS, f.kills);
    }

    private static void round(long seed, int round, Path file, Path out, Path err, Map<String, String> model, Figures f)
            throws Exception {
        SplittableRandom r = new SplittableRandom(seed + round * 0x9E3779B97F4A7C15L);
        boolean whileOpening = r.nextInt(8) == 0;
        int killAfter = r.nextInt(200);
        int delayMillis = r.nextInt(40);
        Ops[] ops = new Ops[THREADS];
        for (int t = 0; t < THREADS; t++) {
            ops[t] = new Ops(seed, round, t, KEYS);
        }
        Process p = KillChild.start(KillChild.class, 64, out, err, file.toString(), Long.toString(seed),
                Integer.toString(round), Integer.toString(THREADS), Integer.toString(KEYS));
        boolean ready = false;
        try {
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread reader = new Thread(() -> readAll(p, out, lines), "kill-child-reader");
            reader.setDaemon(true);
            reader.start();
            int acks = 0;
            while (true) {
                String line = lines.poll(2, TimeUnit.MINUTES); // a hang guard, not a time assertion
                if (line == null || line.equals(EOF)) {
                    throw new AssertionError((line == null ? "the child said nothing for 2 minutes"
                            : "the child ended by itself with status " + p.waitFor()) + "; its stderr: " + stderr(err));
                }
                if (line.equals("open") && whileOpening) {
                    Thread.sleep(delayMillis);
                    break;
                }
                ready |= line.equals("ready");
                if (ack(line, ops, model)) {
                    acks++;
                    if (acks > killAfter) {
                        break;
                    }
                }
            }
            p.destroyForcibly();
            int status = p.waitFor();
            for (String line = lines.take(); !line.equals(EOF); line = lines.take()) {
                ready |= line.equals("ready");
                acks += ack(line, ops, model) ? 1 : 0; // reported before the kill, read after it
            }
            reader.join();
            assertEquals(KILLED, status, "destroyForcibly sends SIGKILL; stderr: " + stderr(err));
            f.kills++;
            f.acks += acks;
            f.killedWhileOpening += ready ? 0 : 1;
        } finally {
            if (p.isAlive()) {
                p.destroyForcibly();
                p.waitFor();
            }
        }
        check(file, ops, model, f);
    }

    /**
     * Every line the child writes to {@code out}, then {@link #EOF} once it has ended. The child's
     * stdout goes to a file, not a pipe: a pipe from {@code Process.getInputStream} can end in
     * "Stream closed" when the JDK's reaper drains and closes it as the killed child is reaped,
     * and the acknowledgements still in it were lost, so that the test took acknowledged
     * operations for ones never run. A killed process's writes to a file all stay readable.
     */
    private static void readAll(Process p, Path out, BlockingQueue<String> lines) {
        try (InputStream in = Files.newInputStream(out)) {
            StringBuilder line = new StringBuilder();
            byte[] buf = new byte[8192];
            while (true) {
                boolean ended = !p.isAlive(); // a read after this sees all the child wrote
                int n = in.read(buf);
                for (int i = 0; i < n; i++) {
                    if (buf[i] == '\n') {
                        lines.add(line.toString());
                        line.setLength(0);
                    } else {
                        line.append((char) buf[i]);
                    }
                }
                if (n > 0) {
                    continue;
                }
                if (ended) {
                    if (line.length() > 0) {
                        lines.add(line.toString()); // a torn last line: no acknowledgement
                    }
                    return;
                }
                Thread.sleep(1);
            }
        } catch (IOException | InterruptedException e) {
            lines.add(READ_FAILED + e);
        } finally {
            lines.add(EOF);
        }
    }

    /** Applies an acknowledgement to the model; false for any other line (open, ready, a torn last line). */
    private static boolean ack(String line, Ops[] ops, Map<String, String> model) {
        if (line.startsWith(READ_FAILED)) {
            throw new AssertionError(line + "): acknowledgements may be missing");
        }
        String[] w = line.split(" ");
        if (w.length != 4 || !w[3].equals(".")) {
            return false;
        }
        int t = Integer.parseInt(w[0]);
        long n = Long.parseLong(w[1]);
        Op op = ops[t].next();
        if (op.n() != n) {
            throw new AssertionError("thread " + t + " acknowledged operation " + n + ", expected " + op.n());
        }
        // What the operation saw is what the operations acknowledged before it left: the child
        // reads its own writes, across the kills before this round too.
        String expected = Op.token(model.get(op.key()));
        if (!w[2].equals(expected)) {
            throw new AssertionError("thread " + t + " operation " + n + " (kind " + op.kind() + ") on " + op.key()
                    + " saw " + w[2] + "; the operations acknowledged before it left " + expected);
        }
        put(model, op.key(), op.after(model.get(op.key())));
        return true;
    }

    private static void put(Map<String, String> model, String key, String value) {
        if (value == null) {
            model.remove(key);
        } else {
            model.put(key, value);
        }
    }

    /** The store after the kill against the model; then the model takes what the operations in flight left. */
    private static void check(Path file, Ops[] ops, Map<String, String> model, Figures f) {
        try (HtodStore s = Htod.builder(file).createIfMissing(false).durability(Durability.SYNC).open()) {
            HtodMap<String, String> m = s.map(KillChild.MAP, Codec.string(), Codec.string());
            List<Op> inFlight = new ArrayList<>();
            for (Ops o : ops) {
                inFlight.add(o.peek());
            }
            Map<String, String> present = new HashMap<>();
            for (int t = 0; t < THREADS; t++) {
                Op next = inFlight.get(t);
                for (int i = 0; i < KEYS; i++) {
                    String k = Ops.key(t, i);
                    String found = m.get(k);
                    String acked = model.get(k);
                    String applied = k.equals(next.key()) ? next.after(acked) : acked;
                    if (!Objects.equals(found, acked) && !Objects.equals(found, applied)) {
                        throw new AssertionError(k + " holds " + brief(found) + "; acknowledged " + brief(acked)
                                + (k.equals(next.key()) ? ", in flight " + brief(applied) : ""));
                    }
                    if (found != null) {
                        present.put(k, found);
                    }
                }
                String acked = model.get(next.key());
                String found = m.get(next.key());
                if (Objects.equals(acked, next.after(acked))) {
                    f.inFlightNoChange++;
                } else if (Objects.equals(found, acked)) {
                    f.inFlightNotApplied++;
                } else {
                    f.inFlightApplied++;
                }
                put(model, next.key(), found);
            }
            assertEquals(present, new HashMap<>(m), "iteration agrees with lookups");
            assertEquals(present.size(), m.size());
            VerifyReport v = s.verify();
            assertTrue(v.ok(), v.toString());
        }
    }

    private static String brief(String v) {
        return v == null ? "nothing" : v.length() > 40 ? v.substring(0, 40) + "... (" + v.length() + " chars)" : v;
    }

    private static String stderr(Path err) {
        try {
            return Files.exists(err) ? Files.readString(err) : "(none)";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
