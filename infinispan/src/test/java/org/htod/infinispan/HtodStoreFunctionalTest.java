package org.htod.infinispan;

import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.cache.PersistenceConfigurationBuilder;
import org.infinispan.persistence.BaseStoreFunctionalTest;
import org.testng.annotations.Factory;
import org.testng.annotations.Test;

/**
 * Infinispan's functional kit for stores, through a real cache manager: two caches on one store
 * configuration, preload with expiry, binary storage, byte-array values, cache removal with and
 * without passivation, putAll (the store's batch), iteration with and without segment filters,
 * eviction and reload, purge racing a concurrent update.
 */
@Test(groups = {"unit", "smoke"}, testName = "persistence.htod.HtodStoreFunctionalTest")
public class HtodStoreFunctionalTest extends BaseStoreFunctionalTest {
    private final int segmentCount;
    private final boolean segmented;

    public HtodStoreFunctionalTest(int segmentCount, boolean segmented) {
        this.segmentCount = segmentCount;
        this.segmented = segmented;
    }

    @Factory
    public static Object[] factory() {
        return new Object[] {
            new HtodStoreFunctionalTest(256, true),
            new HtodStoreFunctionalTest(1, true),
            new HtodStoreFunctionalTest(256, false),
        };
    }

    @Override
    protected String parameters() {
        return "[" + segmentCount + ", " + segmented + "]";
    }

    @Override
    protected ConfigurationBuilder getDefaultCacheConfiguration() {
        ConfigurationBuilder builder = super.getDefaultCacheConfiguration();
        builder.clustering().hash().numSegments(segmentCount);
        return builder;
    }

    @Override
    protected PersistenceConfigurationBuilder createCacheStoreConfig(PersistenceConfigurationBuilder persistence,
            String cacheName, boolean preload) {
        persistence.addStore(HtodStoreConfigurationBuilder.class)
                .segmented(segmented)
                .purgeOnStartup(false)
                .preload(preload);
        return persistence;
    }
}
