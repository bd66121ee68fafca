package org.htod.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.htod.bench.store.DiskWrites;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The durable-put report reads JMH's JSON and the device lines, and orients its ratios. */
class DurableReportTest {
    @TempDir
    Path dir;

    private static String run(String store, int size, int threads, double score) {
        return "{\"benchmark\": \"org.htod.bench.DurablePutBenchmark.put\", \"threads\": " + threads
                + ", \"params\": {\"store\": \"" + store + "\", \"valueSize\": \"" + size + "\", \"keySpace\": \"100000\"},"
                + " \"primaryMetric\": {\"score\": " + score + ", \"scoreError\": \"NaN\", \"scoreUnit\": \"ops/s\"}}";
    }

    @Test
    void tablesOfPutsRatiosScalingAndGroups() throws IOException {
        Path json = dir.resolve("r.json");
        Files.writeString(json, "[" + String.join(",", run("htod-log", 200, 1, 100), run("rocksdb", 200, 1, 200),
                run("htod-log", 200, 4, 400), run("rocksdb", 200, 4, 100)) + "]");
        List<DurableReport.Score> scores = DurableReport.read(json);
        assertEquals(4, scores.size());
        String md = DurableReport.report(scores,
                List.of("durable-io store=htod-log valueSize=200 threads=4 puts=1000 syncs=250 writes=260"
                        + " bytesWritten=500000 groups=200 groupRecords=1000 waitsAtOnce=10 waitsYielded=590 waitsParked=200"
                        + " flusherBusySeconds=7.500 openSeconds=10.000",
                        "durable-io store=htod-log valueSize=4000 threads=4 puts=10 syncs=5 writes=5 bytesWritten=50000"
                        + " groups=5 groupRecords=10",
                        "durable-disk store=rocksdb valueSize=200 threads=4 puts=2000 disk=vda diskBytes=3000000"
                        + " diskWrites=500 diskBytesPerPut=1500 diskWritesPerPut=0.250",
                        "durable-cpu store=htod-log valueSize=200 threads=4 puts=1000 processCpuNs=50000000"
                        + " writersCpuNs=30000000 writersUserNs=10000000 flusherCpuNs=5000000 flusherUserNs=2000000",
                        "durable-cpu store=rocksdb valueSize=200 threads=4 puts=2000 processCpuNs=90000000"
                        + " writersCpuNs=60000000 writersUserNs=20000000"), "cmd", List.of("Disk: fast."));
        // runs without drain figures: JMH's scores, marked
        assertTrue(md.contains("| 200 | 1 | 100* | 200* |"), md);
        assertTrue(md.contains("| 200 | 1 | 0.50* |"), md);
        assertTrue(md.contains("| 200 | 4 | 4.00* |"), md);
        assertTrue(md.contains("| 200 | 4 | 4.00* | 0.50* |"), md);
        assertTrue(md.contains("| htod-log | 200 | 4 | 1,000 | 4.00 | 5.00 | 500 | 25.0% | 75% |"), md);
        // a log that counted neither its waits nor its flusher's time
        assertTrue(md.contains("| htod-log | 4000 | 4 | 10 | 2.00 | 2.00 | 5,000 | – | – |"), md);
        assertTrue(md.contains("Command: `cmd`") && md.contains("Disk: fast."), md);
        // the disk's line in a table of its own, not in htod's device table
        assertTrue(md.contains("| rocksdb | 200 | 4 | 2,000 | 1,500 | 0.250 |"), md);
        assertFalse(md.contains("| rocksdb | 200 | 4 | 2,000 | –"), md);
        // processor time per put: process, writers, writers' user, flusher and its user (htod's only), the rest
        assertTrue(md.contains("| htod-log | 200 | 4 | 1,000 | 50.0 | 30.0 | 10.0 | 5.0 | 2.0 | 15.0 |"), md);
        assertTrue(md.contains("| rocksdb | 200 | 4 | 2,000 | 45.0 | 30.0 | 10.0 | – | – | 15.0 |"), md);
    }

    /** A run with drain figures: two iterations of {@code ops[i]} puts in {@code ms[i]}, {@code drainMs} of them draining. */
    private static String drained(String store, int threads, double jmhScore, long[] ops, double[] ms, double drainMs) {
        return "{\"benchmark\": \"org.htod.bench.DurablePutBenchmark.put\", \"threads\": " + threads
                + ", \"params\": {\"store\": \"" + store + "\", \"valueSize\": \"200\", \"keySpace\": \"100000\"},"
                + " \"primaryMetric\": {\"score\": " + jmhScore + ", \"scoreError\": \"NaN\", \"scoreUnit\": \"ops/s\"},"
                + " \"secondaryMetrics\": {"
                + "\"drainedOps\": {\"score\": " + (ops[0] + ops[1]) + ", \"rawData\": [[" + ops[0] + ", " + ops[1] + "]]},"
                + "\"drainedMs\": {\"score\": " + (ms[0] + ms[1]) + ", \"rawData\": [[" + ms[0] + ", " + ms[1] + "]]},"
                + "\"drainMs\": {\"score\": " + drainMs + ", \"rawData\": [[0, 0]]}}}";
    }

    @Test
    void putsAndRatiosAreOfTheDrainedRate() throws IOException {
        Path json = dir.resolve("d.json");
        // htod: JMH counts 1,000 puts/s but its passes, drains included, make 500; RocksDB 400 and 400
        Files.writeString(json, "[" + String.join(",",
                drained("htod-log", 1, 1000, new long[] {1000, 1000}, new double[] {2000, 2000}, 1000),
                drained("rocksdb", 1, 400, new long[] {400, 400}, new double[] {1000, 1000}, 0),
                run("sqlite", 200, 1, 100)) + "]");
        List<DurableReport.Score> scores = DurableReport.read(json);
        assertEquals(500, scores.get(0).score(), 1e-9);
        assertTrue(scores.get(0).drained() && !scores.get(2).drained());
        String md = DurableReport.report(scores, List.of(), "", List.of());
        assertTrue(md.contains("| 200 | 1 | 500 | 400 | 100* |"), md);
        // the ratio is of the drained rates (500 / 400), not of JMH's scores (1,000 / 400)
        assertTrue(md.contains("| 200 | 1 | 1.25 | 5.00* |"), md);
        // JMH's own score apart, with the drains' share of the passes' time
        assertTrue(md.contains("| 200 | 1 | 1,000 (25.0%) | 400 (0.0%) | 100 |"), md);
        assertTrue(md.contains("\\* JMH's score: the run has no drain figures"), md);
    }

    @Test
    void diskWritesAreReadFromTheKernelsLines() {
        List<String> lines = List.of(
                " 254       0 vda 230153 12932 12324002 152878 15377938 471244 319980232 14095256 0 414424 14357060",
                " 254       1 vda1 1 2 3 4 5 6 7 8 0 9 10");
        assertEquals(Optional.of(new DiskWrites.Count(319980232L * 512, 15377938)), DiskWrites.parse(lines, "vda"));
        assertEquals(Optional.of(new DiskWrites.Count(7L * 512, 5)), DiskWrites.parse(lines, "vda1"));
        assertEquals(Optional.empty(), DiskWrites.parse(lines, "vdb"));
        assertEquals(new DiskWrites.Count(100, 2), new DiskWrites.Count(612, 7).since(new DiskWrites.Count(512, 5)));
    }
}
