package org.htod.odg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A site-shaped graph of 50,000 nodes and 250,000 edges times {@code htod.test.scale} (one million
 * and five million under {@code -Phtod-torture}) built and checked by {@link GraphScaleRun} in a
 * JVM limited to a 256 MiB heap: the graph lives on disk, not in memory.
 */
class GraphScaleTest {
    @Test
    void aLargeGraphFitsInASmallHeap() throws IOException, InterruptedException {
        int nodes = 50_000 * Integer.getInteger("htod.test.scale", 1);
        Path dir = Path.of(System.getProperty("htod.test.dir", System.getProperty("java.io.tmpdir")));
        Files.createDirectories(dir);
        Path file = Files.createTempFile(dir, "odg-scale", ".htod");
        Files.delete(file);
        Path log = Files.createTempFile(dir, "odg-scale", ".log");
        try {
            Process p = new ProcessBuilder(GraphScaleRun.command(nodes, file)).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            assertTrue(p.waitFor(60, TimeUnit.MINUTES), "the run ended");
            String out = Files.readString(log, StandardCharsets.UTF_8);
            System.out.println(out);
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("graph scale: "), out);
        } finally {
            Files.deleteIfExists(file);
            Files.deleteIfExists(log);
        }
    }
}
