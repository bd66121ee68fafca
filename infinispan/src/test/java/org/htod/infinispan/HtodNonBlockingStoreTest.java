package org.htod.infinispan;

import org.infinispan.commons.test.CommonsTestingUtil;
import org.infinispan.commons.util.Util;
import org.infinispan.configuration.cache.Configuration;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.persistence.BaseNonBlockingStoreTest;
import org.infinispan.persistence.spi.NonBlockingStore;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Factory;
import org.testng.annotations.Test;

/**
 * Infinispan's own unit kit for stores, every call wrapped by its EnsureNonBlockingStore so that
 * BlockHound fails the test if a store method blocks its caller: loads, writes, deletes, batches,
 * expiry by lifespan and max idle with a controlled clock, purge, restart, sizes, segment removal.
 * Run segmented (a map per segment) and non-segmented (one map).
 */
@Test(groups = "unit", testName = "persistence.htod.HtodNonBlockingStoreTest")
public class HtodNonBlockingStoreTest extends BaseNonBlockingStoreTest {
    private final boolean segmented;

    public HtodNonBlockingStoreTest(boolean segmented) {
        this.segmented = segmented;
    }

    @Factory
    public static Object[] factory() {
        return new Object[] {new HtodNonBlockingStoreTest(true), new HtodNonBlockingStoreTest(false)};
    }

    @Override
    protected String parameters() {
        return "[segmented=" + segmented + "]";
    }

    @AfterClass(alwaysRun = true)
    protected void removeStoreFiles() {
        Util.recursiveFileRemove(CommonsTestingUtil.tmpDirectory(getClass()));
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
                .location(segmented ? "segmented" : "single")
                .segmented(segmented)
                .build();
    }
}
