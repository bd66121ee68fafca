package org.htod.infinispan;

import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.htod.Codec;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.infinispan.commons.test.BlockHoundHelper;
import org.infinispan.commons.test.CommonsTestingUtil;
import org.infinispan.commons.test.ThreadLeakChecker;
import org.infinispan.commons.util.Util;
import org.infinispan.test.AbstractInfinispanTest;
import org.testng.annotations.AfterSuite;
import org.testng.annotations.Test;

/**
 * That the kit's checks are really on. First the non-blocking check: Infinispan's TestNG listener
 * has installed BlockHound with Infinispan's integrations and ours ({@link
 * HtodBlockHoundIntegration}), and an htod read from a thread that must not block is caught.
 * Without this, the store tests would pass just as well with BlockHound missing (it failed to
 * install here once, for want of log4j-core).
 *
 * <p>After the suite, it runs the kit's thread-leak check (as the kit's own TestNGSuiteChecksTest
 * does, which has no test method for the TestNG engine to find) and fails on any report the kit
 * wrote: a thread some test left running, or a blocking call that no test saw fail (one on a
 * background thread, say).
 */
@Test(groups = "unit", testName = "persistence.htod.KitChecksTest")
public class KitChecksTest extends AbstractInfinispanTest {
    /** Where Infinispan's BlockHound integration writes a report per blocking call. */
    private static final Path REPORTS = Path.of("target", "surefire-reports");

    public void testHtodFileReadOnANonBlockingThreadIsCaught() throws IOException {
        Path dir = Path.of(CommonsTestingUtil.tmpDirectory(getClass()));
        Files.createDirectories(dir);
        try (HtodStore store = Htod.builder(dir.resolve("probe.htod")).cacheSize(0).open()) {
            HtodMap<String, String> map = store.map("probe", Codec.string(), Codec.string());
            map.put("k", "v");
            // Log mode (the default) serves a fresh write from its write buffer, in memory: the
            // checkpoint installs it in the table, so that the get below reads the file.
            store.checkpoint();
            AssertionError caught = expectThrows(AssertionError.class,
                    () -> BlockHoundHelper.ensureNonBlocking(() -> map.get("k")));
            assertTrue(caught.getMessage().startsWith("Blocking call!"), caught.getMessage());
        } finally {
            Util.recursiveFileRemove(dir);
            // The deliberate call above left a report like any blocking call: it is no failure.
            for (Path p : blockingReports()) {
                if (p.getFileName().toString().contains(getClass().getSimpleName())) {
                    Files.delete(p);
                }
            }
        }
    }

    @AfterSuite(alwaysRun = true)
    public void noBlockingCallOrLeakedThreadWentUnseen() throws IOException {
        ThreadLeakChecker.checkForLeaks("");
        List<Path> reports = reports("TEST-*-Blocking.xml");
        reports.addAll(reports("TEST-ThreadLeakChecker*.xml"));
        if (!reports.isEmpty()) {
            throw new AssertionError("blocking calls on non-blocking threads or leaked threads, reported in " + reports);
        }
    }

    private static List<Path> blockingReports() throws IOException {
        return reports("TEST-*-Blocking.xml");
    }

    private static List<Path> reports(String glob) throws IOException {
        List<Path> out = new ArrayList<>();
        if (Files.isDirectory(REPORTS)) {
            try (DirectoryStream<Path> s = Files.newDirectoryStream(REPORTS, glob)) {
                s.forEach(out::add);
            }
        }
        return out;
    }
}
