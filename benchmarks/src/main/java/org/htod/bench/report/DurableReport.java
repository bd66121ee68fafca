package org.htod.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.htod.bench.store.DurableStores;

/**
 * The tables of the durable-put benchmark ({@code DurablePutBenchmark}), from its JMH JSON: puts/s
 * for each store, value size and thread count; how many times faster each htod mode is than each
 * rival; how each store scales from one thread; JMH's own score beside the drain's share of the
 * time; and, from the lines the benchmark leaves, how
 * many puts each of htod's syncs carried ({@code durable-io}), the processor time of a put
 * ({@code durable-cpu}) and what the disk wrote for it ({@code durable-disk}).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar org.htod.bench.report.DurableReport \
 *     [--command CMD] [--note TEXT]... [--io durable-io.txt] results.json...
 * </pre>
 *
 * Prints Markdown; {@code benchmarks/run.sh durable} runs it.
 *
 * <p>Puts/s is the drained rate ({@link DrainedScore}): each iteration a pass from the store
 * drained to the store drained again, the drain (flush, the work the store put off, its files forced
 * to disk) timed with it, {@code drainedOps / drainedMs}; the ratios and the scaling are of it.
 * JMH's primary score, puts over the iteration's time alone, leaves the drain out, and is shown
 * apart. A run without drain figures (one made before the iterations were drained) is scored by
 * JMH's score, marked {@code *}.
 */
public final class DurableReport {

    private DurableReport() {}

    /**
     * One measured score: puts/s of {@code store} at {@code valueSize} bytes and {@code threads}
     * writers, the drained rate where {@code drained}, else JMH's score; JMH's score {@code jmh} and
     * the drains' share of the passes' time ({@code drainShare}, NaN where unknown) beside it.
     */
    record Score(String store, int valueSize, int threads, double score, double error, boolean drained, double jmh,
            double drainShare) {
        /** A score read from JMH's primary score alone (no drain figures). */
        Score(String store, int valueSize, int threads, double score, double error) {
            this(store, valueSize, threads, score, error, false, score, Double.NaN);
        }
    }

    /** A row of the tables: one value size and thread count. */
    record Row(int valueSize, int threads) implements Comparable<Row> {
        @Override
        public int compareTo(Row o) {
            return valueSize != o.valueSize ? Integer.compare(valueSize, o.valueSize) : Integer.compare(threads, o.threads);
        }
    }

    public static void main(String[] args) throws IOException {
        String command = "";
        List<String> notes = new ArrayList<>();
        Path io = null;
        List<Path> inputs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--command" -> command = args[++i];
                case "--note" -> notes.add(args[++i]);
                case "--io" -> io = Path.of(args[++i]);
                default -> inputs.add(Path.of(args[i]));
            }
        }
        List<Score> scores = new ArrayList<>();
        for (Path in : inputs) {
            scores.addAll(read(in));
        }
        List<String> ioLines = io != null && Files.exists(io) ? Files.readAllLines(io, StandardCharsets.UTF_8) : List.of();
        System.out.print(report(scores, ioLines, command, notes));
    }

    static List<Score> read(Path json) throws IOException {
        JsonNode root = new ObjectMapper().readTree(json.toFile());
        List<Score> out = new ArrayList<>();
        for (JsonNode run : root) {
            if (!run.get("benchmark").asText().endsWith("DurablePutBenchmark.put")) {
                continue;
            }
            JsonNode p = run.get("params");
            JsonNode m = run.get("primaryMetric");
            double error = m.get("scoreError").isNumber() ? m.get("scoreError").asDouble() : Double.NaN;
            String store = p.get("store").asText();
            int valueSize = p.get("valueSize").asInt();
            int threads = run.get("threads").asInt();
            double jmh = m.get("score").asDouble();
            out.add(DrainedScore.of(run)
                    .map(d -> new Score(store, valueSize, threads, d.score(), d.error(), true, jmh, d.drainShare()))
                    .orElseGet(() -> new Score(store, valueSize, threads, jmh, error)));
        }
        return out;
    }

    static String report(List<Score> scores, List<String> ioLines, String command, List<String> notes) {
        Map<Row, Map<String, Score>> byRow = new HashMap<>();
        Set<Row> rows = new TreeSet<>();
        Set<String> present = new LinkedHashSet<>();
        for (Score s : scores) {
            Row r = new Row(s.valueSize, s.threads);
            rows.add(r);
            byRow.computeIfAbsent(r, k -> new HashMap<>()).put(s.store, s);
        }
        List<String> stores = new ArrayList<>();
        for (String name : DurableStores.ALL) {
            if (scores.stream().anyMatch(s -> s.store.equals(name))) {
                stores.add(name);
            }
        }
        scores.stream().map(Score::store).filter(n -> !stores.contains(n)).forEach(present::add);
        stores.addAll(present);

        StringBuilder b = new StringBuilder();
        b.append(Machine.describe()).append('\n');
        if (!command.isEmpty()) {
            b.append("Command: `").append(command).append("`\n");
        }
        for (String n : notes) {
            b.append(n).append('\n');
        }

        rowTable(b, "Durable puts/s, each measured iteration a pass from the store drained to the store drained"
                + " again, the drain at its end (flush, the work the store put off, its files forced to disk) timed"
                + " with it (`drainedOps / drainedMs`; all threads together; ± is JMH's 99.9% error of the"
                + " iterations' rates):", rows, stores, s -> s, (r, s) -> {
                    Score x = byRow.get(r).get(s);
                    if (x == null) {
                        return "–";
                    }
                    return Double.isNaN(x.error) ? String.format(Locale.ROOT, "%,.0f%s", x.score, mark(x))
                            : String.format(Locale.ROOT, "%,.0f ± %,.0f%s", x.score, x.error, mark(x));
                });

        List<String> htods = stores.stream().filter(s -> s.startsWith("htod")).toList();
        List<String[]> pairs = new ArrayList<>();
        for (String h : htods) {
            for (String s : stores) {
                if (!s.equals(h) && !(s.startsWith("htod") && htods.indexOf(s) < htods.indexOf(h))) {
                    pairs.add(new String[] {h, s});
                }
            }
        }
        if (!pairs.isEmpty()) {
            rowTable(b, "htod's puts/s divided by each rival's (above 1: htod is faster):", rows, pairs,
                    p -> p[0] + " ÷ " + p[1], (r, p) -> {
                        Score h = byRow.get(r).get(p[0]);
                        Score x = byRow.get(r).get(p[1]);
                        return h == null || x == null ? "–"
                                : String.format(Locale.ROOT, "%.2f%s", h.score / x.score, mark(h, x));
                    });
        }

        rowTable(b, "Scaling: puts/s at each thread count divided by puts/s at 1 thread:", rows, stores, s -> s, (r, s) -> {
            Map<String, Score> one = byRow.get(new Row(r.valueSize, 1));
            Score x = byRow.get(r).get(s);
            Score base = one == null ? null : one.get(s);
            return x == null || base == null ? "–"
                    : String.format(Locale.ROOT, "%.2f%s", x.score / base.score, mark(x, base));
        });

        if (scores.stream().anyMatch(Score::drained)) {
            rowTable(b, "JMH's own score, puts/s over each iteration's time alone (what the store still had to do at"
                    + " its end left out), and in brackets the drains' share of the passes' time:", rows, stores,
                    s -> s, (r, s) -> {
                        Score x = byRow.get(r).get(s);
                        if (x == null) {
                            return "–";
                        }
                        return Double.isNaN(x.drainShare) ? String.format(Locale.ROOT, "%,.0f", x.jmh)
                                : String.format(Locale.ROOT, "%,.0f (%.1f%%)", x.jmh, 100 * x.drainShare);
                    });
        }
        if (scores.stream().anyMatch(s -> !s.drained)) {
            b.append("\n\\* JMH's score: the run has no drain figures (made before its iterations were drained), so"
                    + " what the store still had to do when each iteration ended is left out.\n");
        }

        trialTable(b, ioLines, "durable-io", "htod's device over each whole trial (warmup included): puts per device"
                + " sync, log records per group commit (log mode), bytes written per put, and the share of the waits"
                + " for another's group commit that ended parked rather than while yielding (where the log counts"
                + " them), and htod's flusher's time at work against the time the store was open (near 100%, one"
                + " flusher set the writers' pace):",
                List.of("puts/sync", "records/group", "bytes written/put", "waits parked", "flusher busy"), f -> {
                    long puts = Long.parseLong(f.get("puts"));
                    long syncs = Long.parseLong(f.getOrDefault("syncs", "0"));
                    long written = Long.parseLong(f.getOrDefault("bytesWritten", "0"));
                    String perGroup = "–";
                    if (f.containsKey("groups") && Long.parseLong(f.get("groups")) > 0) {
                        perGroup = format("%.2f",
                                Long.parseLong(f.get("groupRecords")) / (double) Long.parseLong(f.get("groups")));
                    }
                    return List.of(syncs == 0 ? "–" : format("%.2f", puts / (double) syncs), perGroup,
                            puts == 0 ? "–" : format("%,.0f", written / (double) puts), parkedShare(f), busyShare(f));
                });
        trialTable(b, ioLines, "durable-cpu", "Processor time per put over each whole trial (warmup included), in"
                + " microseconds: the whole process's (every thread: a store's background threads, RocksDB's"
                + " compactions, the collector and the compilers too), the writer threads' (and of it in user mode:"
                + " the rest is the kernel's, their writes and syncs), htod's flusher's (and of it in user mode), and"
                + " the rest of the process's. A store whose writers and background threads together use about as"
                + " many processors as the machine has is bound by them; one far below is bound by its disk or by"
                + " waiting:",
                List.of("process µs/put", "writers µs/put", "writers' user µs/put", "flusher µs/put",
                        "flusher's user µs/put", "rest µs/put"), f -> {
                    long puts = Math.max(1, Long.parseLong(f.get("puts")));
                    long process = Long.parseLong(f.getOrDefault("processCpuNs", "0"));
                    long writers = Long.parseLong(f.getOrDefault("writersCpuNs", "0"));
                    long flusher = Long.parseLong(f.getOrDefault("flusherCpuNs", "0"));
                    return List.of(format("%.1f", process / 1e3 / puts), format("%.1f", writers / 1e3 / puts),
                            format("%.1f", Long.parseLong(f.getOrDefault("writersUserNs", "0")) / 1e3 / puts),
                            perPut(f, "flusherCpuNs", puts),
                            perPut(f, "flusherUserNs", puts), format("%.1f", (process - writers - flusher) / 1e3 / puts));
                });
        trialTable(b, ioLines, "durable-disk", "The disk under each store over each whole trial (warmup, close and the"
                + " writeback of what the store left in the page cache included), as the kernel counts it: bytes"
                + " written and write requests per put. A store's own writes become whole pages at the disk; these"
                + " are what the disk's bandwidth is spent on:",
                List.of("disk bytes/put", "disk writes/put"), f -> {
                    long puts = Math.max(1, Long.parseLong(f.get("puts")));
                    return List.of(format("%,.0f", Long.parseLong(f.getOrDefault("diskBytes", "0")) / (double) puts),
                            format("%.3f", Long.parseLong(f.getOrDefault("diskWrites", "0")) / (double) puts));
                });
        return b.toString();
    }

    /**
     * A table of one row per value size and thread count, after a paragraph {@code intro}: a column
     * per item of {@code columns}, headed by {@code label}, each cell {@code cell} of its row and
     * column.
     */
    private static <T> void rowTable(StringBuilder b, String intro, Collection<Row> rows, List<T> columns,
            Function<T, String> label, BiFunction<Row, T, String> cell) {
        b.append('\n').append(intro).append("\n\n| value B | threads |");
        columns.forEach(c -> b.append(' ').append(label.apply(c)).append(" |"));
        b.append("\n|---|---|");
        columns.forEach(c -> b.append("---|"));
        b.append('\n');
        for (Row r : rows) {
            b.append("| ").append(r.valueSize).append(" | ").append(r.threads).append(" |");
            for (T c : columns) {
                b.append(' ').append(cell.apply(r, c)).append(" |");
            }
            b.append('\n');
        }
    }

    /**
     * Appends the table of the lines of {@code kind}, if there are any: {@code intro}, then a header
     * of the columns each such table begins with (store, value size, threads, puts) and {@code
     * columns}, then a row for each line, those four cells and the ones {@code cells} gives it.
     */
    private static void trialTable(StringBuilder b, List<String> lines, String kind, String intro,
            List<String> columns, Function<Map<String, String>, List<String>> cells) {
        List<Map<String, String>> trials = trials(lines, kind);
        if (trials.isEmpty()) {
            return;
        }
        List<String> header = new ArrayList<>(List.of("store", "value B", "threads", "puts"));
        header.addAll(columns);
        b.append('\n').append(intro).append("\n\n| ").append(String.join(" | ", header)).append(" |\n|")
                .append("---|".repeat(header.size())).append('\n');
        for (Map<String, String> f : trials) {
            List<String> row = new ArrayList<>(List.of(String.valueOf(f.get("store")), String.valueOf(f.get("valueSize")),
                    String.valueOf(f.get("threads")), format("%,d", Long.parseLong(f.get("puts")))));
            row.addAll(cells.apply(f));
            b.append("| ").append(String.join(" | ", row)).append(" |").append(System.lineSeparator());
        }
    }

    /** "*" where a score has no drain figures (JMH's score), else nothing. */
    private static String mark(Score... scores) {
        for (Score s : scores) {
            if (!s.drained) {
                return "*";
            }
        }
        return "";
    }

    /** {@code String.format} in the root locale, as every figure of the tables. */
    private static String format(String pattern, Object... args) {
        return String.format(Locale.ROOT, pattern, args);
    }

    /** Field {@code key} of a line, in nanoseconds, as microseconds a put; "–" where the line has none. */
    static String perPut(Map<String, String> f, String key, long puts) {
        return f.containsKey(key) ? format("%.1f", Long.parseLong(f.get(key)) / 1e3 / puts) : "–";
    }

    /** Of the waits a line counts, the share that parked, as a percentage; "–" where it counts none. */
    static String parkedShare(Map<String, String> f) {
        if (!f.containsKey("waitsParked")) {
            return "–";
        }
        long parked = Long.parseLong(f.get("waitsParked"));
        long all = parked + Long.parseLong(f.getOrDefault("waitsYielded", "0"))
                + Long.parseLong(f.getOrDefault("waitsAtOnce", "0"));
        return all == 0 ? "–" : format("%.1f%%", 100.0 * parked / all);
    }

    /** The flusher's time at work over the store's time open, as a percentage; "–" where the line has none. */
    static String busyShare(Map<String, String> f) {
        if (!f.containsKey("flusherBusySeconds") || !f.containsKey("openSeconds")) {
            return "–";
        }
        double open = Double.parseDouble(f.get("openSeconds"));
        return open <= 0 ? "–"
                : format("%.0f%%", 100 * Double.parseDouble(f.get("flusherBusySeconds")) / open);
    }

    /**
     * The fields of the lines of {@code kind} ({@code durable-io}, {@code durable-cpu}, {@code
     * durable-disk}) that name their store and puts.
     */
    static List<Map<String, String>> trials(List<String> lines, String kind) {
        return lines.stream().filter(l -> l.startsWith(kind + " ")).map(DurableReport::fields)
                .filter(f -> f.containsKey("store") && f.containsKey("puts")).toList();
    }

    /** The {@code key=value} fields of a {@code durable-io}, {@code durable-cpu} or {@code durable-disk} line. */
    static Map<String, String> fields(String line) {
        Map<String, String> f = new HashMap<>();
        for (String word : line.trim().split("\\s+")) {
            int eq = word.indexOf('=');
            if (eq > 0) {
                f.put(word.substring(0, eq), word.substring(eq + 1));
            }
        }
        return f;
    }
}
