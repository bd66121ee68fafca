package org.htod.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;

/**
 * Turns JMH JSON results into what a reader looks at: one PNG bar chart per workload (the
 * benchmark with every parameter but the subject fixed), and a Markdown table of each subject's
 * throughput relative to a reference subject, written into a Markdown file between markers. A
 * throughput write run whose iterations drain the store ({@code ReplaceBenchmark}) is scored by its
 * drained rate ({@link DrainedScore}: each iteration from the store drained to the store drained
 * again, the drain timed), not by JMH's primary score, which leaves the drain out.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar org.htod.bench.report.ResultsReport \
 *     --subject store --reference htod --out benchmarks/results --readme README.md \
 *     [--marker benchmarks] results.json...
 * </pre>
 *
 * The table goes between {@code <!-- MARKER:begin -->} and {@code <!-- MARKER:end -->}, so that one
 * file can hold several tables. {@code benchmarks/run.sh} runs it.
 */
public final class ResultsReport {

    private ResultsReport() {}

    /**
     * One measured score: for a run that drains its iterations the drained rate ({@code drained}
     * true), else JMH's primary score.
     */
    record Score(String workload, String subject, double score, double error, String unit, boolean drained) {}

    public static void main(String[] args) throws IOException {
        System.setProperty("java.awt.headless", "true");
        String subject = "store";
        String reference = "htod";
        Path out = Path.of("benchmarks/results");
        Path readme = null;
        String command = "";
        String marker = "benchmarks";
        List<Path> inputs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--subject" -> subject = args[++i];
                case "--reference" -> reference = args[++i];
                case "--out" -> out = Path.of(args[++i]);
                case "--readme" -> readme = Path.of(args[++i]);
                case "--command" -> command = args[++i];
                case "--marker" -> marker = args[++i];
                default -> inputs.add(Path.of(args[i]));
            }
        }
        List<Score> scores = new ArrayList<>();
        for (Path in : inputs) {
            scores.addAll(read(in, subject));
        }
        Files.createDirectories(out);
        Map<String, List<Score>> byWorkload = new TreeMap<>();
        for (Score s : scores) {
            byWorkload.computeIfAbsent(s.workload, w -> new ArrayList<>()).add(s);
        }
        for (Map.Entry<String, List<Score>> e : byWorkload.entrySet()) {
            chart(e.getKey(), subject, e.getValue(), out.resolve(fileName(e.getKey()) + ".png"));
        }
        String table = table(byWorkload, reference, command);
        System.out.println(table);
        if (readme != null) {
            writeBetweenMarkers(readme, marker, table);
        }
    }

    static List<Score> read(Path json, String subjectParam) throws IOException {
        JsonNode root = new ObjectMapper().readTree(json.toFile());
        List<Score> out = new ArrayList<>();
        for (JsonNode run : root) {
            String bench = run.get("benchmark").asText();
            bench = bench.substring(bench.lastIndexOf('.', bench.lastIndexOf('.') - 1) + 1);
            Map<String, String> params = new TreeMap<>();
            JsonNode p = run.get("params");
            if (p != null) {
                for (Iterator<Map.Entry<String, JsonNode>> it = p.fields(); it.hasNext();) {
                    Map.Entry<String, JsonNode> f = it.next();
                    params.put(f.getKey(), f.getValue().asText());
                }
            }
            String subject = params.remove(subjectParam);
            if (subject == null) {
                subject = bench;
            }
            StringBuilder workload = new StringBuilder(bench);
            params.forEach((k, v) -> workload.append(' ').append(k).append('=').append(v));
            JsonNode m = run.get("primaryMetric");
            String unit = m.get("scoreUnit").asText();
            Optional<DrainedScore> drained = DrainedScore.of(run);
            if (drained.isPresent()) {
                out.add(new Score(workload.toString(), subject, drained.get().score(), drained.get().error(), unit, true));
            } else {
                double error = m.get("scoreError").isNumber() ? m.get("scoreError").asDouble() : Double.NaN;
                out.add(new Score(workload.toString(), subject, m.get("score").asDouble(), error, unit, false));
            }
        }
        return out;
    }

    static void chart(String workload, String subject, List<Score> scores, Path png) throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(900).height(500).title(workload)
                .xAxisTitle(subject).yAxisTitle(scores.get(0).unit).build();
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setErrorBarsColorSeriesColor(true);
        List<String> names = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        List<Double> errors = new ArrayList<>();
        for (Score s : scores) {
            names.add(s.subject);
            values.add(s.score);
            errors.add(Double.isNaN(s.error) ? 0.0 : s.error);
        }
        chart.addSeries("score", names, values, errors);
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    static String table(Map<String, List<Score>> byWorkload, String reference, String command) {
        Set<String> subjects = new LinkedHashSet<>();
        byWorkload.values().forEach(l -> l.forEach(s -> subjects.add(s.subject)));
        StringBuilder b = new StringBuilder();
        // The workloads scored in time per operation, named from the scores themselves (their ratios are
        // of times, inverted): a fixed list named the iterations' AverageTime runs single-shot and left
        // out the replacement pass
        Set<String> timed = new TreeSet<>();
        byWorkload.forEach((w, l) -> l.stream().filter(ResultsReport::timePerOp)
                .forEach(s -> timed.add(w.split(" ", 2)[0])));
        b.append("How many times faster ").append(reference).append(" is than each store, in the same run (above 1: ")
                .append(reference).append(" is faster): a ratio of throughputs");
        if (!timed.isEmpty()) {
            b.append(", or the inverse ratio of times per operation for the workloads scored in time (")
                    .append(String.join(", ", timed)).append(')');
        }
        Set<String> drained = new TreeSet<>();
        byWorkload.forEach((w, l) -> l.stream().filter(Score::drained).forEach(s -> drained.add(w.split(" ", 2)[0])));
        if (!drained.isEmpty()) {
            b.append("; for ").append(String.join(", ", drained)).append(" the throughput is the drained rate:"
                    + " operations over each iteration from the store drained to the store drained again, the drain"
                    + " (flush, the work the store put off, its files forced to disk) timed with them"
                    + " (`drainedOps / drainedMs`), not JMH's score, which leaves the drain out");
        }
        b.append(". ").append(Machine.describe()).append('\n');
        if (!command.isEmpty()) {
            b.append("Command: `").append(command).append("`\n");
        }
        b.append('\n').append("| workload |");
        for (String s : subjects) {
            b.append(' ').append(s).append(" |");
        }
        b.append('\n').append("|---|");
        subjects.forEach(s -> b.append("---|"));
        b.append('\n');
        for (Map.Entry<String, List<Score>> e : byWorkload.entrySet()) {
            Map<String, Score> bySubject = new LinkedHashMap<>();
            e.getValue().forEach(s -> bySubject.put(s.subject, s));
            Score ref = bySubject.get(reference);
            b.append("| ").append(e.getKey()).append(" |");
            for (String s : subjects) {
                Score x = bySubject.get(s);
                if (x == null) {
                    b.append(" – |");
                } else if (ref == null) {
                    b.append(String.format(Locale.ROOT, " %.4g %s |", x.score, x.unit));
                } else {
                    b.append(String.format(Locale.ROOT, " %.2f |", speedup(ref, x)));
                }
            }
            b.append('\n');
        }
        return b.toString();
    }

    /**
     * How many times faster {@code ref} is than {@code x}: a ratio of throughputs, or the inverse
     * ratio of times when the unit is a time per operation (single-shot passes).
     */
    static double speedup(Score ref, Score x) {
        return timePerOp(ref) ? x.score / ref.score : ref.score / x.score;
    }

    /** Whether the score is a time per operation (ms/op: single-shot and average-time runs), not a throughput. */
    static boolean timePerOp(Score s) {
        return s.unit.endsWith("/op");
    }

    static void writeBetweenMarkers(Path file, String marker, String content) throws IOException {
        String begin = "<!-- " + marker + ":begin -->";
        String end = "<!-- " + marker + ":end -->";
        String text = Files.readString(file, StandardCharsets.UTF_8);
        int from = text.indexOf(begin);
        int to = text.indexOf(end);
        if (from < 0 || to < from) {
            throw new IllegalStateException(file + " has no " + begin + " ... " + end + " section to write the table into");
        }
        String updated = text.substring(0, from + begin.length()) + "\n" + content + text.substring(to);
        Files.writeString(file, updated, StandardCharsets.UTF_8);
    }

    static String fileName(String workload) {
        return workload.replaceAll("[^A-Za-z0-9=_.-]+", "_");
    }
}
