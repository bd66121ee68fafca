package org.htod.sample;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Headless Chromium loads the status page and a page of the demo site, as a person's browser
 * would (scripts run), saves screenshots under {@code target/browser/}, and the test reads what
 * the rendered DOM shows. Skipped, with a message, only where Chromium is missing and {@code CI}
 * is not {@code true}; in CI it must run ({@code .ci/run} installs Debian's {@code chromium}).
 */
class BrowserTest {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

    @TempDir
    Path dir;

    @Test
    void theStatusPageAndAPageShowWhatTheStoreHolds() throws Exception {
        boolean ci = "true".equals(System.getenv("CI"));
        if (!Files.isExecutable(CHROMIUM)) {
            assertTrue(!ci, "CI=true but " + CHROMIUM + " is missing: .ci/run installs Debian's chromium");
            assumeTrue(false, "skipped: " + CHROMIUM + " is missing (apt-get install chromium); CI is not true");
        }
        Path shots = Path.of("target", "browser");
        Files.createDirectories(shots);
        try (PublishingServer server = PublishingServer.start(new PublishingServer.Config(dir.resolve("site.htod"),
                "127.0.0.1", 0, 1 << 20, Duration.ofSeconds(10), DemoSite.small(), 0))) {
            Http http = new Http(server.url());
            assertEquals(200, http.put("/fragments" + DemoSite.results(0, 0), "<p id=\"fresh\">Gold: Freeman 49.11</p>")
                    .statusCode());
            http.get("/pages/index.html");
            String status = chromium(server.url(), "--dump-dom");
            String fragments = String.format(Locale.ROOT, "%,d", server.cache().fragmentCount());
            assertTrue(status.contains("<h1>htod publishing server</h1>"), status);
            assertTrue(status.contains("id=\"fragments\">" + fragments + "<"), "the status page shows " + fragments
                    + " fragments: " + status);
            assertTrue(status.contains("id=\"clean\">yes<"), "a new store opened cleanly: " + status);
            assertTrue(status.matches("(?s).*<polyline class=\"pub\"[^>]*points=\"[0-9., ]*\".*"), "the chart: " + status);
            String page = chromium(server.url() + "pages/index.html", "--dump-dom");
            assertTrue(page.contains("<p id=\"fresh\">Gold: Freeman 49.11</p>"), "the home page shows the new results: "
                    + page);
            assertTrue(page.contains("<title>Home</title>") && !page.contains("#include"), page);
            for (String[] shot : new String[][] {{server.url(), "status.png"}, {server.url() + "pages/index.html",
                    "index.png"}}) {
                Path png = shots.resolve(shot[1]).toAbsolutePath();
                Files.deleteIfExists(png);
                chromium(shot[0], "--screenshot=" + png, "--window-size=1200,900");
                byte[] head = Arrays.copyOf(Files.readAllBytes(png), 8);
                assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, head, png + " is a PNG");
                assertTrue(Files.size(png) > 10_000, png + " has " + Files.size(png) + " bytes: a blank page?");
            }
        }
    }

    /** Runs headless Chromium on {@code url} with {@code args}; returns what it printed. */
    private String chromium(String url, String... args) throws IOException, InterruptedException {
        Path profile = Files.createTempDirectory(dir, "chromium");
        List<String> cmd = new ArrayList<>(List.of(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--user-data-dir=" + profile, "--virtual-time-budget=3000"));
        cmd.addAll(List.of(args));
        cmd.add(url);
        Path out = dir.resolve("chromium.out");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(dir.resolve("chromium.err").toFile())
                .start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError("chromium did not finish in 90 s: " + cmd);
        }
        String text = Files.readString(out, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), "chromium failed: " + Files.readString(dir.resolve("chromium.err")));
        return text;
    }
}
