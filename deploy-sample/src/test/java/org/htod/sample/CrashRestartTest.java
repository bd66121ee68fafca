package org.htod.sample;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server in a child JVM, under publishes and reads, is killed with SIGKILL and started again
 * on the same store: every publish it had answered is served (its version or a later one), and
 * for every fragment the writers sent, answered or still in flight at the kill, every page it
 * affects shows the fragment as served: a publish is all or nothing (the store is in log mode,
 * each publish one batch). The restart time is printed. With {@code
 * -Dhtod.sample.crash.filler=N} the store also holds N archive fragments (the README's figure
 * for a million).
 */
class CrashRestartTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern VERSION = Pattern.compile("data-version=\"(\\d+)\"");

    @TempDir
    Path dir;

    @Test
    void everyAnsweredPublishSurvivesAKill() throws Exception {
        int filler = Integer.getInteger("htod.sample.crash.filler", 0);
        Path store = dir.resolve("site.htod");
        DemoSite site = DemoSite.small();
        Child first = Child.start(dir, store, filler, "first");
        Http http = new Http("http://127.0.0.1:" + first.port + "/");
        Map<String, Long> acked = new ConcurrentHashMap<>();
        Set<String> sent = ConcurrentHashMap.newKeySet();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        List<Thread> load = new ArrayList<>();
        List<String> results = site.resultPaths();
        int writers = 3;
        for (int w = 0; w < writers; w++) {
            int id = w;
            load.add(new Thread(() -> {
                SplittableRandom r = new SplittableRandom(id);
                for (long v = 1; !stop.get(); v++) {
                    String p = results.get(id + writers * r.nextInt(results.size() / writers));
                    sent.add(p);
                    try {
                        if (http.put("/fragments" + p, site.resultsFragment(p, v, r)).statusCode() == 200) {
                            acked.put(p, v); // one writer per path: v is that path's latest answered version
                        }
                    } catch (RuntimeException e) {
                        return; // the server died under this request: not answered, so not owed
                    }
                }
            }));
        }
        load.add(new Thread(() -> {
            List<String> pages = site.pagePaths();
            SplittableRandom r = new SplittableRandom(9);
            while (!stop.get()) {
                try {
                    http.get("/pages" + pages.get(r.nextInt(pages.size())));
                    reads.incrementAndGet();
                } catch (RuntimeException e) {
                    return;
                }
            }
        }));
        load.forEach(Thread::start);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
        while (System.nanoTime() < until || acked.size() < 5) {
            Thread.sleep(50);
        }
        first.process.destroyForcibly(); // SIGKILL
        first.process.waitFor();
        stop.set(true);
        for (Thread t : load) {
            t.join();
        }
        assertEquals(137, first.process.exitValue(), "killed by SIGKILL");

        long t0 = System.nanoTime();
        Child second = Child.start(dir, store, filler, "second");
        double restartMs = (System.nanoTime() - t0) / 1e6;
        try {
            Http again = new Http("http://127.0.0.1:" + second.port + "/");
            JsonNode rec = JSON.readTree(again.get("/stats").body()).get("figures").get("recovery");
            System.out.printf("restart after SIGKILL: %.0f ms to a served port (JVM start included); server ready in %.0f ms;"
                    + " store open %.0f ms; %d answered publishes, %d fragments checked, %d reads before the kill; store: %s%n", restartMs,
                    rec.get("serverReadyMillis").asDouble(), rec.get("heapMillis").asDouble() + rec.get("tablesMillis")
                            .asDouble(), acked.size(), sent.size(), reads.get(), rec.get("detail").asText());
            assertEquals(false, rec.get("clean").asBoolean(), "the store was not closed: it recovered");
            assertTrue(rec.get("detail").asText().contains("log"), "a store in log mode: " + rec.get("detail").asText());
            for (String p : sent) {
                HttpResponse<String> src = again.get("/fragments" + p);
                assertEquals(200, src.statusCode(), p);
                Matcher m = VERSION.matcher(src.body());
                assertTrue(m.find(), src.body());
                long served = Long.parseLong(m.group(1));
                Long answered = acked.get(p);
                assertTrue(answered == null || served >= answered, p + ": answered version " + answered + ", served "
                        + served);
                JsonNode g = JSON.readTree(again.get("/graph" + p).body());
                assertTrue(g.get("affectedCount").asInt() >= 4, g.toString());
                for (JsonNode a : g.get("affected")) {
                    String page = again.get("/pages" + a.asText()).body();
                    assertTrue(page.contains(src.body()), a.asText() + " does not show " + p + " as served (version " + served
                            + (answered == null ? ", never answered" : "") + "): the publish is not all or nothing");
                }
            }
        } finally {
            second.process.destroy(); // SIGTERM: a clean shutdown through the hook
            assertTrue(second.process.waitFor(60, TimeUnit.SECONDS));
        }
    }

    /** A server process on {@code store}, started and ready (its port written). */
    private record Child(Process process, int port) {
        static Child start(Path dir, Path store, int filler, String name) throws IOException, InterruptedException {
            Path portFile = dir.resolve(name + ".port");
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx512m", "-cp", System.getProperty("java.class.path"), Main.class.getName(), "--data", store.toString(),
                    "--port", "0", "--port-file", portFile.toString(), "--demo", "--demo-size", "small"));
            if (filler > 0) {
                cmd.addAll(List.of("--filler", Integer.toString(filler)));
            }
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve(name + ".log").toFile())
                    .start();
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(filler > 0 ? 30 : 2);
            while (!Files.exists(portFile)) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    p.destroyForcibly();
                    throw new AssertionError("the server did not start: "
                            + Files.readString(dir.resolve(name + ".log"), StandardCharsets.UTF_8));
                }
                Thread.sleep(20);
            }
            return new Child(p, Integer.parseInt(Files.readString(portFile, StandardCharsets.UTF_8).trim()));
        }
    }
}
