package org.htod.infinispan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.htod.Durability;
import org.htod.StorageMethod;
import org.infinispan.commons.CacheConfigurationException;
import org.infinispan.configuration.cache.Configuration;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.configuration.parsing.ConfigurationBuilderHolder;
import org.infinispan.configuration.parsing.ParserRegistry;
import org.junit.jupiter.api.Test;

/** Configuration in Java and in XML, and the typed errors for bad values. */
class HtodStoreConfigurationTest {
    @Test
    void javaConfigurationReachesTheStoreConfiguration() {
        ConfigurationBuilder b = new ConfigurationBuilder();
        b.persistence().addStore(HtodStoreConfigurationBuilder.class)
                .location("/data/htod").durability(Durability.ASYNC).syncInterval(250).cacheSize(1 << 20)
                .storageMethod(StorageMethod.PL).grain(1024).loadFactor(1.5).preload(true);
        HtodStoreConfiguration c = (HtodStoreConfiguration) b.build().persistence().stores().get(0);
        assertEquals("/data/htod", c.location());
        assertEquals(Durability.ASYNC, c.durability());
        assertEquals(250, c.syncInterval());
        assertEquals(1 << 20, c.cacheSize());
        assertEquals(StorageMethod.PL, c.storageMethod());
        assertEquals(1024, c.grain());
        assertEquals(1.5, c.loadFactor());
        assertTrue(c.preload());
        assertTrue(c.segmented(), "segmented by default, a map per segment");
    }

    @Test
    void defaultsAreDurable() {
        ConfigurationBuilder b = new ConfigurationBuilder();
        b.persistence().addStore(HtodStoreConfigurationBuilder.class);
        HtodStoreConfiguration c = (HtodStoreConfiguration) b.build().persistence().stores().get(0);
        assertEquals(Durability.SYNC, c.durability());
        assertEquals(null, c.location());
    }

    @Test
    void badValuesAreRefusedAtOnceNamingTheAttribute() {
        HtodStoreConfigurationBuilder b = new ConfigurationBuilder().persistence().addStore(HtodStoreConfigurationBuilder.class);
        assertMessage(assertThrows(CacheConfigurationException.class, () -> b.grain(100)), "grain");
        assertMessage(assertThrows(CacheConfigurationException.class, () -> b.cacheSize(-1)), "cache-size");
        assertMessage(assertThrows(CacheConfigurationException.class, () -> b.loadFactor(0)), "load-factor");
        assertMessage(assertThrows(CacheConfigurationException.class, () -> b.syncInterval(0)), "sync-interval");
    }

    @Test
    void withoutGlobalStateALocationIsRequired() {
        GlobalConfigurationBuilder global = new GlobalConfigurationBuilder();
        global.globalState().disable();
        ConfigurationBuilder b = new ConfigurationBuilder();
        b.persistence().addStore(HtodStoreConfigurationBuilder.class);
        CacheConfigurationException e = assertThrows(CacheConfigurationException.class, () -> b.build(global.build()));
        assertMessage(e, "location");
    }

    @Test
    void xmlConfigurationIsParsed() {
        String xml = "<infinispan><cache-container><local-cache name=\"pages\"><persistence>"
                + "<htod-store xmlns=\"urn:htod:infinispan:store:1.0\" location=\"pages\" durability=\"NONE\""
                + " cache-size=\"1048576\" storage-method=\"PFL\" grain=\"256\" load-factor=\"2.0\" sync-interval=\"50\""
                + " preload=\"true\" segmented=\"false\"/>"
                + "</persistence></local-cache></cache-container></infinispan>";
        ConfigurationBuilderHolder holder = new ParserRegistry().parse(xml);
        Configuration cache = holder.getNamedConfigurationBuilders().get("pages").build();
        HtodStoreConfiguration c = (HtodStoreConfiguration) cache.persistence().stores().get(0);
        assertEquals("pages", c.location());
        assertEquals(Durability.NONE, c.durability());
        assertEquals(1 << 20, c.cacheSize());
        assertEquals(StorageMethod.PFL, c.storageMethod());
        assertEquals(256, c.grain());
        assertEquals(2.0, c.loadFactor());
        assertEquals(50, c.syncInterval());
        assertTrue(c.preload());
        assertEquals(false, c.segmented());
    }

    @Test
    void xmlWithABadValueIsRefused() {
        String xml = "<infinispan><cache-container><local-cache name=\"pages\"><persistence>"
                + "<htod-store xmlns=\"urn:htod:infinispan:store:1.0\" durability=\"SOMETIMES\"/>"
                + "</persistence></local-cache></cache-container></infinispan>";
        RuntimeException e = assertThrows(RuntimeException.class, () -> new ParserRegistry().parse(xml));
        assertMessage(e, "durability");
    }

    private static void assertMessage(Throwable e, String part) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append(" / ");
        }
        assertTrue(all.toString().contains(part), "expected \"" + part + "\" in: " + all);
    }
}
