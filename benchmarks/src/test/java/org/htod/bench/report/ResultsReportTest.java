package org.htod.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report reads JMH's JSON, orients each ratio by its unit, and writes only between its markers. */
class ResultsReportTest {
    @TempDir
    Path dir;

    private static final String JSON = """
            [
              {"benchmark": "org.htod.bench.ReadBenchmark.r", "params": {"store": "htod", "durability": "NONE"},
               "primaryMetric": {"score": 300.0, "scoreError": 10.0, "scoreUnit": "ops/s"}},
              {"benchmark": "org.htod.bench.ReadBenchmark.r", "params": {"store": "sqlite", "durability": "NONE"},
               "primaryMetric": {"score": 100.0, "scoreError": "NaN", "scoreUnit": "ops/s"}},
              {"benchmark": "org.htod.bench.WriteBenchmark.wp", "params": {"store": "htod", "durability": "NONE"},
               "primaryMetric": {"score": 50.0, "scoreError": 1.0, "scoreUnit": "ms/op"}},
              {"benchmark": "org.htod.bench.WriteBenchmark.wp", "params": {"store": "sqlite", "durability": "NONE"},
               "primaryMetric": {"score": 200.0, "scoreError": 1.0, "scoreUnit": "ms/op"}}
            ]
            """;

    @Test
    void ratiosSayHowManyTimesFasterTheReferenceIs() throws IOException {
        Path json = dir.resolve("r.json");
        Files.writeString(json, JSON);
        List<ResultsReport.Score> scores = ResultsReport.read(json, "store");
        assertEquals(4, scores.size());
        Map<String, List<ResultsReport.Score>> byWorkload = new TreeMap<>();
        for (ResultsReport.Score s : scores) {
            byWorkload.computeIfAbsent(s.workload(), w -> new java.util.ArrayList<>()).add(s);
        }
        String table = ResultsReport.table(byWorkload, "htod", "cmd");
        // reads: 300/s against 100/s is 3 times faster; a pass of 50 ms against 200 ms is 4 times faster
        assertTrue(table.contains("| ReadBenchmark.r durability=NONE | 1.00 | 3.00 |"), table);
        assertTrue(table.contains("| WriteBenchmark.wp durability=NONE | 1.00 | 4.00 |"), table);
        assertTrue(table.contains("Command: `cmd`"), table);
        // the heading names the workloads whose ratios are of times, from their units
        assertTrue(table.contains("inverse ratio of times per operation for the workloads scored in time"
                + " (WriteBenchmark.wp)"), table);
    }

    @Test
    void headingNamesEveryTimedWorkloadAndNoOther() throws IOException {
        Path json = dir.resolve("t.json");
        Files.writeString(json, """
                [
                  {"benchmark": "org.htod.bench.IterateBenchmark.ik", "params": {"store": "htod"},
                   "primaryMetric": {"score": 5.0, "scoreError": 1.0, "scoreUnit": "ms/op"}},
                  {"benchmark": "org.htod.bench.ReplacePassBenchmark.pass", "params": {"store": "htod"},
                   "primaryMetric": {"score": 900.0, "scoreError": 1.0, "scoreUnit": "ms/op"}},
                  {"benchmark": "org.htod.bench.ReplaceBenchmark.replace", "params": {"store": "htod"},
                   "primaryMetric": {"score": 9000.0, "scoreError": 1.0, "scoreUnit": "ops/s"}}
                ]
                """);
        Map<String, List<ResultsReport.Score>> byWorkload = new TreeMap<>();
        for (ResultsReport.Score s : ResultsReport.read(json, "store")) {
            byWorkload.computeIfAbsent(s.workload(), w -> new java.util.ArrayList<>()).add(s);
        }
        String table = ResultsReport.table(byWorkload, "htod", "");
        assertTrue(table.contains("(IterateBenchmark.ik, ReplacePassBenchmark.pass)"), table);
        assertTrue(!table.contains("single-shot workloads (Wp, Wn, Ik, Iv, Ie)"), table);
    }

    @Test
    void replacementsAreScoredByTheirDrainedRate() throws IOException {
        Path json = dir.resolve("d.json");
        // JMH's scores say htod makes 3 times sqlite's replacements/s; drained, htod's passes make
        // 1,000 in 2 s and 1,000 in 3 s (400/s), sqlite's 300 in 1 s and 300 in 2 s (200/s)
        Files.writeString(json, """
                [
                  {"benchmark": "org.htod.bench.ReplaceBenchmark.replace", "params": {"store": "htod"},
                   "primaryMetric": {"score": 900.0, "scoreError": 1.0, "scoreUnit": "ops/s"},
                   "secondaryMetrics": {
                     "drainedOps": {"score": 2000, "rawData": [[1000, 1000]]},
                     "drainedMs": {"score": 5000.0, "rawData": [[2000.0, 3000.0]]},
                     "drainMs": {"score": 2000.0, "rawData": [[1000.0, 1000.0]]}}},
                  {"benchmark": "org.htod.bench.ReplaceBenchmark.replace", "params": {"store": "sqlite"},
                   "primaryMetric": {"score": 300.0, "scoreError": 1.0, "scoreUnit": "ops/s"},
                   "secondaryMetrics": {
                     "drainedOps": {"score": 600, "rawData": [[300, 300]]},
                     "drainedMs": {"score": 3000.0, "rawData": [[1000.0, 2000.0]]},
                     "drainMs": {"score": 0.0, "rawData": [[0.0, 0.0]]}}}
                ]
                """);
        List<ResultsReport.Score> scores = ResultsReport.read(json, "store");
        assertEquals(400.0, scores.get(0).score(), 1e-9);
        assertEquals(200.0, scores.get(1).score(), 1e-9);
        Map<String, List<ResultsReport.Score>> byWorkload = new TreeMap<>();
        scores.forEach(s -> byWorkload.computeIfAbsent(s.workload(), w -> new java.util.ArrayList<>()).add(s));
        String table = ResultsReport.table(byWorkload, "htod", "");
        assertTrue(table.contains("| ReplaceBenchmark.replace | 1.00 | 2.00 |"), table);
        assertTrue(table.contains("for ReplaceBenchmark.replace the throughput is the drained rate"), table);
    }

    @Test
    void writesBetweenItsOwnMarkersOnly() throws IOException {
        Path readme = dir.resolve("README.md");
        Files.writeString(readme, "top\n<!-- a:begin -->\nold a\n<!-- a:end -->\nmid\n<!-- b:begin -->\nold b\n"
                + "<!-- b:end -->\nend\n");
        ResultsReport.writeBetweenMarkers(readme, "b", "new b\n");
        assertEquals("top\n<!-- a:begin -->\nold a\n<!-- a:end -->\nmid\n<!-- b:begin -->\nnew b\n<!-- b:end -->\nend\n",
                Files.readString(readme));
        assertThrows(IllegalStateException.class, () -> ResultsReport.writeBetweenMarkers(readme, "c", "x"));
    }
}
