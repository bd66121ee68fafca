package org.htod.infinispan;

import org.htod.Durability;
import org.htod.Htod;
import org.htod.StorageMethod;
import org.infinispan.commons.configuration.BuiltBy;
import org.infinispan.commons.configuration.ConfigurationFor;
import org.infinispan.commons.configuration.attributes.AttributeDefinition;
import org.infinispan.commons.configuration.attributes.AttributeSet;
import org.infinispan.configuration.cache.AbstractStoreConfiguration;
import org.infinispan.configuration.cache.AsyncStoreConfiguration;
import org.infinispan.configuration.serializing.SerializedWith;

/**
 * Configuration of an {@link HtodNonBlockingStore}: where its file lives, when writes are
 * durable, its entry cache, and the options fixed when the file is created. Built by {@link
 * HtodStoreConfigurationBuilder}; in XML, {@code <htod-store>} with the same attribute names, which
 * {@link HtodStoreConfigurationSerializer} writes back.
 */
@BuiltBy(HtodStoreConfigurationBuilder.class)
@ConfigurationFor(HtodNonBlockingStore.class)
@SerializedWith(HtodStoreConfigurationSerializer.class)
public class HtodStoreConfiguration extends AbstractStoreConfiguration<HtodStoreConfiguration> {
    /** Directory of the stores; relative to the global persistent location, or under it if absolute. */
    static final AttributeDefinition<String> LOCATION =
            AttributeDefinition.builder("location", null, String.class).immutable().build();
    static final AttributeDefinition<Durability> DURABILITY =
            AttributeDefinition.builder("durability", Durability.SYNC).immutable().build();
    static final AttributeDefinition<Long> SYNC_INTERVAL =
            AttributeDefinition.builder("sync-interval", 1000L).immutable().build();
    /** htod's own default (a sixteenth of the heap, 8 MiB to 1 GiB): reads that miss Infinispan's memory find their entry there. */
    static final AttributeDefinition<Long> CACHE_SIZE =
            AttributeDefinition.builder("cache-size", Htod.defaultCacheSize()).immutable().build();
    static final AttributeDefinition<StorageMethod> STORAGE_METHOD =
            AttributeDefinition.builder("storage-method", StorageMethod.TS).immutable().build();
    static final AttributeDefinition<Integer> GRAIN = AttributeDefinition.builder("grain", 512).immutable().build();
    static final AttributeDefinition<Double> LOAD_FACTOR =
            AttributeDefinition.builder("load-factor", 0.75).immutable().build();
    /** htod's default: log mode, the mode in which a batch is atomic and a crash reopen replays the log. */
    static final AttributeDefinition<Boolean> DIRECT_MODE =
            AttributeDefinition.builder("direct-mode", false).immutable().build();
    /** htod's default log region of a new file, 64 MiB: an eighth of it is the largest batch kept whole. */
    static final long DEFAULT_LOG_SIZE = 64L << 20;
    static final AttributeDefinition<Long> LOG_SIZE =
            AttributeDefinition.builder("log-size", DEFAULT_LOG_SIZE).immutable().build();
    static final AttributeDefinition<Long> BUFFER_SIZE =
            AttributeDefinition.builder("buffer-size", Htod.defaultBufferSize()).immutable().build();

    public static AttributeSet attributeDefinitionSet() {
        return new AttributeSet(HtodStoreConfiguration.class, AbstractStoreConfiguration.attributeDefinitionSet(), LOCATION,
                DURABILITY, SYNC_INTERVAL, CACHE_SIZE, STORAGE_METHOD, GRAIN, LOAD_FACTOR, DIRECT_MODE, LOG_SIZE,
                BUFFER_SIZE);
    }

    public HtodStoreConfiguration(AttributeSet attributes, AsyncStoreConfiguration async) {
        super(Element.HTOD_STORE, attributes, async);
    }

    /** The directory given, or null for the global persistent location. */
    public String location() {
        return attributes.attribute(LOCATION).get();
    }

    /** When a write is durable relative to the store call that made it; default {@link Durability#SYNC}. */
    public Durability durability() {
        return attributes.attribute(DURABILITY).get();
    }

    /** Milliseconds between background syncs at {@link Durability#ASYNC}. */
    public long syncInterval() {
        return attributes.attribute(SYNC_INTERVAL).get();
    }

    /** Bytes of htod's cache of entries read from disk. */
    public long cacheSize() {
        return attributes.attribute(CACHE_SIZE).get();
    }

    /** Heap storage method of a new file. */
    public StorageMethod storageMethod() {
        return attributes.attribute(STORAGE_METHOD).get();
    }

    /** Allocation unit of a new file's heap, in bytes. */
    public int grain() {
        return attributes.attribute(GRAIN).get();
    }

    /** Entries per bucket above which a segment's table doubles. */
    public double loadFactor() {
        return attributes.attribute(LOAD_FACTOR).get();
    }

    /**
     * Whether htod writes straight into its tables (direct mode) instead of through its log and
     * write buffer; default false: log mode, in which each Infinispan batch is one atomic htod
     * {@code WriteBatch} and a crash reopen replays the log instead of walking every entry.
     */
    public boolean directMode() {
        return attributes.attribute(DIRECT_MODE).get();
    }

    /** Bytes of a new file's log region (log mode); an eighth of it is the largest batch committed whole. */
    public long logSize() {
        return attributes.attribute(LOG_SIZE).get();
    }

    /** Bytes of memory for htod's write buffer (log mode): changes logged, not yet installed in the tables. */
    public long bufferSize() {
        return attributes.attribute(BUFFER_SIZE).get();
    }
}
