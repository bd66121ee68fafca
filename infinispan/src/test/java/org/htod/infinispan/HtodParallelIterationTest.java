package org.htod.infinispan;

import org.infinispan.commons.test.CommonsTestingUtil;
import org.infinispan.commons.util.Util;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.persistence.ParallelIterationTest;
import org.testng.annotations.Test;

/**
 * Infinispan's iteration kit: 200 entries, half with lifespan and max idle, published to a
 * subscriber that requests from ten threads at once; every entry once, with its value and
 * metadata, with and without values.
 */
@Test(groups = "functional", testName = "persistence.htod.HtodParallelIterationTest")
public class HtodParallelIterationTest extends ParallelIterationTest {
    @Override
    protected void configurePersistence(ConfigurationBuilder cb) {
        cb.persistence().addStore(HtodStoreConfigurationBuilder.class);
    }

    @Override
    protected void teardown() {
        super.teardown();
        Util.recursiveFileRemove(CommonsTestingUtil.tmpDirectory(getClass()));
    }
}
