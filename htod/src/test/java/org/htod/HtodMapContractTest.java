package org.htod;

import com.google.common.collect.testing.ConcurrentMapTestSuiteBuilder;
import com.google.common.collect.testing.TestStringMapGenerator;
import com.google.common.collect.testing.features.CollectionFeature;
import com.google.common.collect.testing.features.CollectionSize;
import com.google.common.collect.testing.features.MapFeature;
import java.nio.file.Path;
import java.util.Map;
import junit.framework.Test;
import junit.framework.TestSuite;
import org.htod.core.device.MemoryDevice;
import org.junit.runner.RunWith;
import org.junit.runners.AllTests;

/**
 * Guava testlib's ConcurrentMap contract suite over {@code HtodMap<String, String>}, on a fresh
 * store per test. After every test the structural verifier runs over the store (chains, CRCs,
 * counts, no leaked block), then the store is closed, reopened cleanly and verified again.
 *
 * <p>Every store has the smallest log region of log mode ({@link #LOG}): each test opens a new
 * store, whose log formats blank frames ahead in its memory device, and with 1 MiB regions the
 * suite took about twice as long. Testlib's suites keep each test case, and through it the map it
 * was given, until the whole suite ends, so thousands of closed stores stay reachable; a closed
 * store lets go of its memory ({@code ClosedStoreMemoryTest}), and with 1 MiB regions the suite
 * runs in a 768 MiB heap, where it once outgrew 6 GiB.
 */
@RunWith(AllTests.class)
public class HtodMapContractTest {

    private static final int LOG = 64 << 10;

    private static HtodStore current;
    private static MemoryDevice device;

    public static Test suite() {
        TestSuite all = new TestSuite("HtodMap");
        all.addTest(suiteFor("HtodMap[NONE]", Durability.NONE));
        all.addTest(suiteFor("HtodMap[SYNC]", Durability.SYNC));
        all.addTest(fileSuite());
        return all;
    }

    private static Test suiteFor(String name, Durability durability) {
        return ConcurrentMapTestSuiteBuilder.using(new TestStringMapGenerator() {
                    @Override
                    protected Map<String, String> create(Map.Entry<String, String>[] entries) {
                        closeCurrent();
                        device = new MemoryDevice();
                        current = TestStores.small(device).logSize(LOG).durability(durability).open();
                        HtodMap<String, String> m = current.map("guava", Codec.string(), Codec.string());
                        for (Map.Entry<String, String> e : entries) {
                            m.put(e.getKey(), e.getValue());
                        }
                        return m;
                    }
                })
                .named(name)
                .withFeatures(MapFeature.GENERAL_PURPOSE, CollectionFeature.SUPPORTS_ITERATOR_REMOVE, CollectionSize.ANY)
                .withTearDown(HtodMapContractTest::closeCurrent)
                .createTestSuite();
    }

    private static Path file;

    /** The same suite on a file (FileDevice); durability NONE, since SYNC is covered above and fsyncs cost time. */
    private static Test fileSuite() {
        return ConcurrentMapTestSuiteBuilder.using(new TestStringMapGenerator() {
                    @Override
                    protected Map<String, String> create(Map.Entry<String, String>[] entries) {
                        closeCurrent();
                        file = TestStores.tempFile("guava");
                        current = Htod.builder(file).grain(64).logSize(LOG).durability(Durability.NONE).open();
                        HtodMap<String, String> m = current.map("guava", Codec.string(), Codec.string());
                        for (Map.Entry<String, String> e : entries) {
                            m.put(e.getKey(), e.getValue());
                        }
                        return m;
                    }
                })
                .named("HtodMap[file, NONE]")
                .withFeatures(MapFeature.GENERAL_PURPOSE, CollectionFeature.SUPPORTS_ITERATOR_REMOVE, CollectionSize.ANY)
                .withTearDown(HtodMapContractTest::closeCurrent)
                .createTestSuite();
    }

    private static void closeCurrent() {
        HtodStore s = current;
        if (s == null) {
            return;
        }
        current = null;
        TestStores.verify(s);
        s.close();
        Path f = file;
        file = null;
        try (HtodStore again = f != null ? Htod.builder(f).createIfMissing(false).open()
                : TestStores.small(device.reopen()).logSize(LOG).open()) {
            if (!again.recoveryReport().clean()) {
                throw new AssertionError("a closed store reopens cleanly: " + again.recoveryReport());
            }
            TestStores.verify(again);
        } finally {
            if (f != null) {
                TestStores.delete(f);
            }
        }
    }
}
