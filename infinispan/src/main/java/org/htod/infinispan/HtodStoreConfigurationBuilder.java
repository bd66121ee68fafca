package org.htod.infinispan;

import static org.htod.infinispan.HtodStoreConfiguration.BUFFER_SIZE;
import static org.htod.infinispan.HtodStoreConfiguration.CACHE_SIZE;
import static org.htod.infinispan.HtodStoreConfiguration.DIRECT_MODE;
import static org.htod.infinispan.HtodStoreConfiguration.DURABILITY;
import static org.htod.infinispan.HtodStoreConfiguration.GRAIN;
import static org.htod.infinispan.HtodStoreConfiguration.LOAD_FACTOR;
import static org.htod.infinispan.HtodStoreConfiguration.LOCATION;
import static org.htod.infinispan.HtodStoreConfiguration.LOG_SIZE;
import static org.htod.infinispan.HtodStoreConfiguration.STORAGE_METHOD;
import static org.htod.infinispan.HtodStoreConfiguration.SYNC_INTERVAL;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.StorageMethod;
import org.infinispan.commons.CacheConfigurationException;
import org.infinispan.commons.configuration.Combine;
import org.infinispan.configuration.cache.AbstractStoreConfigurationBuilder;
import org.infinispan.configuration.cache.PersistenceConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfiguration;
import org.infinispan.persistence.PersistenceUtil;

/**
 * Builds an {@link HtodStoreConfiguration}: {@code
 * persistence().addStore(HtodStoreConfigurationBuilder.class).location("data").durability(Durability.SYNC)}.
 * Each setter checks its value at once and throws {@link CacheConfigurationException} for a bad one;
 * {@link #validate()} checks them again, for values that came from XML or a template.
 */
public class HtodStoreConfigurationBuilder
        extends AbstractStoreConfigurationBuilder<HtodStoreConfiguration, HtodStoreConfigurationBuilder> {

    public HtodStoreConfigurationBuilder(PersistenceConfigurationBuilder builder) {
        super(builder, HtodStoreConfiguration.attributeDefinitionSet());
    }

    @Override
    public HtodStoreConfigurationBuilder self() {
        return this;
    }

    /**
     * Directory under which each cache gets {@code <cache name>/htod/store.htod}. Relative paths are
     * resolved against the global persistent location; absolute ones must lie under it when global
     * state is enabled. Default: the global persistent location itself.
     */
    public HtodStoreConfigurationBuilder location(String location) {
        attributes.attribute(LOCATION).set(Objects.requireNonNull(location, "location"));
        return this;
    }

    /** When a write is durable: SYNC (before the store call completes), ASYNC (within an interval), NONE. */
    public HtodStoreConfigurationBuilder durability(Durability durability) {
        attributes.attribute(DURABILITY).set(Objects.requireNonNull(durability, "durability"));
        return this;
    }

    /** Milliseconds between background syncs at {@link Durability#ASYNC}; default 1000. */
    public HtodStoreConfigurationBuilder syncInterval(long millis) {
        checkSyncInterval(millis);
        attributes.attribute(SYNC_INTERVAL).set(millis);
        return this;
    }

    /**
     * Bytes of htod's read caches (entries read from disk, and bucket slots), 0 for none; default
     * htod's: a sixteenth of the JVM's largest heap, at least 8 MiB and at most 1 GiB, per cache
     * and node.
     */
    public HtodStoreConfigurationBuilder cacheSize(long bytes) {
        checkCacheSize(bytes);
        attributes.attribute(CACHE_SIZE).set(bytes);
        return this;
    }

    /** Heap storage method of a new file (TS, PL or PFL); default TS. Read from the file afterwards. */
    public HtodStoreConfigurationBuilder storageMethod(StorageMethod method) {
        attributes.attribute(STORAGE_METHOD).set(Objects.requireNonNull(method, "method"));
        return this;
    }

    /** Allocation unit of a new file's heap: a multiple of 64 bytes; default 512. */
    public HtodStoreConfigurationBuilder grain(int bytes) {
        checkGrain(bytes);
        attributes.attribute(GRAIN).set(bytes);
        return this;
    }

    /** Entries per bucket above which a segment's table doubles, 0.1 to 10; default 0.75. */
    public HtodStoreConfigurationBuilder loadFactor(double entriesPerBucket) {
        checkLoadFactor(entriesPerBucket);
        attributes.attribute(LOAD_FACTOR).set(entriesPerBucket);
        return this;
    }

    /**
     * Direct mode: htod writes straight into its tables instead of through its log. Default false
     * (log mode), which this store is built for: a batch ({@code putAll}, a transaction's commit,
     * a write-behind flush) is atomic on disk, a durable write costs one shared sync, and a crash
     * reopen replays the log. Direct mode applies batches entry by entry (not atomic across a
     * crash) and walks every entry after a crash; it is for files that must stay readable by
     * direct mode only, or for comparison.
     */
    public HtodStoreConfigurationBuilder directMode(boolean direct) {
        attributes.attribute(DIRECT_MODE).set(direct);
        return this;
    }

    /**
     * Bytes of a new file's log region, a multiple of 4096 and at least 64 KiB in log mode;
     * default 64 MiB. An eighth of it is the largest batch committed as one atomic record (and
     * the largest entry log mode takes); read from the file afterwards.
     */
    public HtodStoreConfigurationBuilder logSize(long bytes) {
        checkLogSize(bytes);
        attributes.attribute(LOG_SIZE).set(bytes);
        return this;
    }

    /**
     * Bytes of memory for htod's write buffer (log mode): changes logged but not yet installed in
     * the tables, which reads look into first; writers wait while it is full. At least 64 KiB;
     * default htod's: 64 MiB, or an eighth of the JVM's largest heap where that is less, per
     * cache and node.
     */
    public HtodStoreConfigurationBuilder bufferSize(long bytes) {
        checkBufferSize(bytes);
        attributes.attribute(BUFFER_SIZE).set(bytes);
        return this;
    }

    @Override
    public void validate() {
        super.validate();
        checkSyncInterval(attributes.attribute(SYNC_INTERVAL).get());
        checkCacheSize(attributes.attribute(CACHE_SIZE).get());
        checkGrain(attributes.attribute(GRAIN).get());
        checkLoadFactor(attributes.attribute(LOAD_FACTOR).get());
        checkLogSize(attributes.attribute(LOG_SIZE).get());
        checkBufferSize(attributes.attribute(BUFFER_SIZE).get());
        if (!attributes.attribute(DIRECT_MODE).get() && attributes.attribute(LOG_SIZE).get() < MIN_LOG_SIZE) {
            throw new CacheConfigurationException("htod-store attribute log-size: log mode needs at least " + MIN_LOG_SIZE
                    + " bytes, found " + attributes.attribute(LOG_SIZE).get() + " (or set direct-mode)");
        }
        if (attributes.attribute(DURABILITY).get() == null || attributes.attribute(STORAGE_METHOD).get() == null) {
            throw new CacheConfigurationException("htod-store: durability and storage-method must be set");
        }
    }

    /** Without global state a store has no default directory: it needs a location. */
    @Override
    public void validate(GlobalConfiguration globalConfig) {
        PersistenceUtil.validateGlobalStateStoreLocation(globalConfig, HtodNonBlockingStore.class.getSimpleName(),
                attributes.attribute(LOCATION));
        super.validate(globalConfig);
    }

    @Override
    public HtodStoreConfiguration create() {
        return new HtodStoreConfiguration(attributes.protect(), async.create());
    }

    @Override
    public HtodStoreConfigurationBuilder read(HtodStoreConfiguration template, Combine combine) {
        super.read(template, combine);
        return this;
    }

    // htod's own builder holds the limits; it is asked here so that they live in one place.

    private static void checkSyncInterval(long millis) {
        htodCheck(() -> PROBE.get().syncInterval(Duration.ofMillis(millis)), "sync-interval");
    }

    private static void checkCacheSize(long bytes) {
        htodCheck(() -> PROBE.get().cacheSize(bytes), "cache-size");
    }

    private static void checkGrain(int bytes) {
        htodCheck(() -> PROBE.get().grain(bytes), "grain");
    }

    private static void checkLoadFactor(double entriesPerBucket) {
        htodCheck(() -> PROBE.get().loadFactor(entriesPerBucket), "load-factor");
    }

    private static void checkLogSize(long bytes) {
        htodCheck(() -> PROBE.get().logSize(bytes), "log-size");
    }

    private static void checkBufferSize(long bytes) {
        htodCheck(() -> PROBE.get().bufferSize(bytes), "buffer-size");
    }

    /** The smallest log region htod's log mode works with. */
    static final long MIN_LOG_SIZE = 64L << 10;

    /** A builder that is never opened: making one touches no file. */
    private static final Supplier<Htod.Builder> PROBE = () -> Htod.builder(Path.of("unopened.htod"));

    private static void htodCheck(Runnable setter, String attribute) {
        try {
            setter.run();
        } catch (IllegalArgumentException e) {
            throw new CacheConfigurationException("htod-store attribute " + attribute + ": " + e.getMessage(), e);
        }
    }
}
