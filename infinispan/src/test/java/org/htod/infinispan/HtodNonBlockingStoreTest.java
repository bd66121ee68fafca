package org.htod.infinispan;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import org.htod.Htod;
import org.infinispan.commons.test.CommonsTestingUtil;
import org.infinispan.commons.util.Util;
import org.infinispan.configuration.cache.Configuration;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.persistence.BaseNonBlockingStoreTest;
import org.infinispan.persistence.spi.NonBlockingStore;
import org.infinispan.persistence.spi.PersistenceException;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Factory;
import org.testng.annotations.Test;

/**
 * Infinispan's own unit kit for stores, every call wrapped by its EnsureNonBlockingStore so that
 * BlockHound fails the test if a store method blocks its caller: loads, writes, deletes, batches,
 * expiry by lifespan and max idle with a controlled clock, purge, restart, sizes, segment removal.
 * Run segmented (a map per segment) and non-segmented (one map) in log mode, the default, and
 * segmented in direct mode, whose batches and clears take the paths without WriteBatch.
 */
@Test(groups = "unit", testName = "persistence.htod.HtodNonBlockingStoreTest")
public class HtodNonBlockingStoreTest extends BaseNonBlockingStoreTest {
    private final boolean segmented;
    private final boolean direct;

    public HtodNonBlockingStoreTest(boolean segmented, boolean direct) {
        this.segmented = segmented;
        this.direct = direct;
    }

    @Factory
    public static Object[] factory() {
        return new Object[] {new HtodNonBlockingStoreTest(true, false), new HtodNonBlockingStoreTest(false, false),
                new HtodNonBlockingStoreTest(true, true)};
    }

    @Override
    protected String parameters() {
        return "[segmented=" + segmented + (direct ? ", direct mode" : "") + "]";
    }

    @AfterClass(alwaysRun = true)
    protected void removeStoreFiles() {
        Util.recursiveFileRemove(CommonsTestingUtil.tmpDirectory(getClass()));
    }

    /** Beyond the kit: a key over htod's limit is refused with a typed error, and the store goes on. */
    public void testKeyOverHtodsLimitIsRefused() {
        String key = "k".repeat(Htod.MAX_KEY_BYTES + 1);
        RuntimeException thrown = expectThrows(RuntimeException.class,
                () -> store.write(marshalledEntry(internalCacheEntry(key, "v", -1))));
        Throwable e = thrown;
        while (!(e instanceof PersistenceException) && e.getCause() != null) {
            e = e.getCause(); // the stage failed: the join wraps its cause
        }
        assertTrue(e instanceof PersistenceException && e.getMessage().contains("takes keys of at most "
                + Htod.MAX_KEY_BYTES + " bytes"), String.valueOf(thrown));
        store.write(marshalledEntry(internalCacheEntry("small", "v", -1)));
        assertTrue(store.contains("small"));
    }

    /** Log mode unless direct mode is asked for. */
    public void testModeIsTheOneConfigured() {
        assertEquals(((HtodNonBlockingStore<?, ?>) store.delegate()).logged(), !direct);
    }

    @Override
    protected NonBlockingStore<Object, Object> createStore() {
        return new HtodNonBlockingStore<>();
    }

    @Override
    protected Configuration buildConfig(ConfigurationBuilder builder) {
        // Each variant in a directory of its own under the kit's global persistent location.
        return builder.persistence()
                .addStore(HtodStoreConfigurationBuilder.class)
                .location((segmented ? "segmented" : "single") + (direct ? "-direct" : ""))
                .segmented(segmented)
                .directMode(direct)
                .build();
    }
}
