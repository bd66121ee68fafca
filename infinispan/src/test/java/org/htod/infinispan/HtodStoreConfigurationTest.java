package org.htod.infinispan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringWriter;
import java.nio.file.Path;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.StorageMethod;
import org.infinispan.Cache;
import org.infinispan.commons.CacheConfigurationException;
import org.infinispan.commons.api.CacheContainerAdmin.AdminFlag;
import org.infinispan.commons.configuration.io.ConfigurationWriter;
import org.infinispan.commons.dataconversion.MediaType;
import org.infinispan.configuration.cache.CacheMode;
import org.infinispan.configuration.cache.Configuration;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.configuration.parsing.ConfigurationBuilderHolder;
import org.infinispan.configuration.parsing.ParserRegistry;
import org.infinispan.manager.DefaultCacheManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
        assertFalse(c.directMode(), "log mode by default: atomic batches, a crash reopen that replays the log");
        assertEquals(64L << 20, c.logSize());
        assertEquals(Htod.defaultBufferSize(), c.bufferSize(), "htod's own default");
        assertEquals(Htod.defaultCacheSize(), c.cacheSize(), "htod's own default, not its 8 MiB floor");
    }

    @Test
    void directModeAndTheLogsSizesAreSet() {
        ConfigurationBuilder b = new ConfigurationBuilder();
        b.persistence().addStore(HtodStoreConfigurationBuilder.class).directMode(true).logSize(1 << 20)
                .bufferSize(1 << 20);
        HtodStoreConfiguration c = (HtodStoreConfiguration) b.build().persistence().stores().get(0);
        assertTrue(c.directMode());
        assertEquals(1 << 20, c.logSize());
        assertEquals(1 << 20, c.bufferSize());
    }

    @Test
    void badValuesAreRefusedAtOnceNamingTheAttribute() {
        HtodStoreConfigurationBuilder b = new ConfigurationBuilder().persistence().addStore(HtodStoreConfigurationBuilder.class);
        assertMessage(assertThrows(CacheConfigurationException.class, () -> b.grain(100)), "grain");
        assertMessage(assertThrows(CacheConfigurationException.class, () -> b.cacheSize(-1)), "cache-size");
        assertMessage(assertThrows(CacheConfigurationException.class, () -> b.loadFactor(0)), "load-factor");
        assertMessage(assertThrows(CacheConfigurationException.class, () -> b.syncInterval(0)), "sync-interval");
        assertMessage(assertThrows(CacheConfigurationException.class, () -> b.logSize(1000)), "log-size");
        assertMessage(assertThrows(CacheConfigurationException.class, () -> b.bufferSize(1000)), "buffer-size");
    }

    @Test
    void logModeNeedsALogRegion() {
        ConfigurationBuilder b = new ConfigurationBuilder();
        HtodStoreConfigurationBuilder store = b.persistence().addStore(HtodStoreConfigurationBuilder.class).logSize(0);
        assertMessage(assertThrows(CacheConfigurationException.class, b::build), "log-size");
        store.directMode(true);
        assertEquals(0, ((HtodStoreConfiguration) b.build().persistence().stores().get(0)).logSize());
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
                + " preload=\"true\" segmented=\"false\" direct-mode=\"true\" log-size=\"1048576\""
                + " buffer-size=\"2097152\"/>"
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
        assertTrue(c.directMode());
        assertEquals(1 << 20, c.logSize());
        assertEquals(2 << 20, c.bufferSize());
    }

    @Test
    void xmlWithABadValueIsRefused() {
        String xml = "<infinispan><cache-container><local-cache name=\"pages\"><persistence>"
                + "<htod-store xmlns=\"urn:htod:infinispan:store:1.0\" durability=\"SOMETIMES\"/>"
                + "</persistence></local-cache></cache-container></infinispan>";
        RuntimeException e = assertThrows(RuntimeException.class, () -> new ParserRegistry().parse(xml));
        assertMessage(e, "durability");
        String typo = xml.replace("durability=\"SOMETIMES\"", "direct-mode=\"yes\"");
        assertMessage(assertThrows(RuntimeException.class, () -> new ParserRegistry().parse(typo)), "direct-mode");
    }

    /**
     * A configuration written by Infinispan (XML, JSON, YAML) parses back to the same one: it
     * used to be written as a custom {@code <store class="...">} carrying htod's attributes,
     * which no parser takes ("Unexpected attribute 'location'").
     */
    @Test
    void aWrittenConfigurationParsesBackTheSame() {
        ConfigurationBuilder b = new ConfigurationBuilder();
        b.persistence().addStore(HtodStoreConfigurationBuilder.class)
                .location("pages").durability(Durability.ASYNC).syncInterval(250).cacheSize(1 << 20)
                .storageMethod(StorageMethod.PL).grain(1024).loadFactor(1.5).directMode(true).logSize(1 << 20)
                .bufferSize(2 << 20).preload(true).segmented(false).maxBatchSize(33).addProperty("p", "v")
                .async().enable().modificationQueueSize(77);
        Configuration c = b.build();
        for (MediaType type : new MediaType[] {MediaType.APPLICATION_XML, MediaType.APPLICATION_JSON,
                MediaType.APPLICATION_YAML}) {
            StringWriter out = new StringWriter();
            try (ConfigurationWriter w = ConfigurationWriter.to(out).withType(type).build()) {
                new ParserRegistry().serialize(w, "pages", c);
            }
            Configuration back = new ParserRegistry().parse(out.toString(), type).getNamedConfigurationBuilders()
                    .get("pages").build();
            assertEquals(c.persistence().stores(), back.persistence().stores(), type + ":\n" + out);
        }
    }

    /**
     * A cache with this store created at runtime on a clustered cache manager, which writes its
     * configuration into the cluster's configuration cache and has every node parse it back. It
     * failed with "Unexpected attribute 'location' encountered".
     */
    @Test
    void aClusteredCacheWithTheStoreIsCreatedAtRuntime(@TempDir Path dir) throws Exception {
        GlobalConfigurationBuilder global = GlobalConfigurationBuilder.defaultClusteredBuilder();
        global.globalState().enable().persistentLocation(dir.toString());
        global.transport().clusterName("htod-config-" + System.nanoTime());
        try (DefaultCacheManager cm = new DefaultCacheManager(global.build())) {
            ConfigurationBuilder b = new ConfigurationBuilder();
            b.clustering().cacheMode(CacheMode.DIST_SYNC);
            b.persistence().addStore(HtodStoreConfigurationBuilder.class).location("runtime");
            Cache<String, String> cache = cm.administration().withFlags(AdminFlag.VOLATILE).createCache("pages", b.build());
            cache.put("k", "v");
            assertEquals("v", cache.get("k"));
            HtodStoreConfiguration c = (HtodStoreConfiguration) cache.getCacheConfiguration().persistence().stores().get(0);
            assertEquals("runtime", c.location());
        }
    }

    private static void assertMessage(Throwable e, String part) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append(" / ");
        }
        assertTrue(all.toString().contains(part), "expected \"" + part + "\" in: " + all);
    }
}
