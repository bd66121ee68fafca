package org.htod.bench.store;

import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.htod.Codec;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.StoreStats;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.FileDevice;
import org.htod.core.device.RawDevice;
import org.htod.core.log.Log;

/**
 * htod itself: one store in the directory, one map of byte[] keys to byte[] values, every default
 * (log mode: puts buffered, logged and installed by the flusher; the TS storage method; the entry
 * cache a sixteenth of the heap). Three devices:
 *
 * <ul>
 *   <li>{@value #NAME}: a {@code FileDevice}, written through the operating system's page cache as
 *       every rival but LMDB and Chronicle Map writes, its reads copied out of mappings of the file
 *       (as LMDB and Chronicle Map read);
 *   <li>{@value #UNMAPPED_NAME}: the same with {@code mapReads(false)}: every read the entry cache
 *       misses is a positional read of the file's channel, a system call;
 *   <li>{@value #RAW_NAME}: a {@code RawDevice} on a file opened with {@code O_DIRECT}: no page
 *       cache, every read the entry cache misses goes to the disk.
 * </ul>
 *
 * <p>Durability: the store is opened with htod's {@code Durability.NONE} and synced here, so that a
 * batch costs one sync as it does for the rivals: at {@link Durability#SYNC} every put, and every
 * batch after its last put, ends with {@code HtodStore.sync()} (a flush of the waiting links
 * between two device syncs); at {@link Durability#NONE} nothing is synced until {@link #flush()}
 * or close. A batch is one {@code putAll}, its entries allocated together (OBA).
 *
 * <p>The durable-put benchmark ({@link DurableStores}) opens two more, at htod's own {@code
 * Durability.SYNC} instead, so that a put returns once it is durable and concurrent puts share
 * their syncs; nothing is synced here. Both count the device's I/O ({@code CountingDevice}) so that
 * a run can say how many puts each sync carried:
 *
 * <ul>
 *   <li>{@value #LOG_NAME}: log mode, the default: a put's log record is made durable by a group
 *       commit (one write and one sync for every record appended meanwhile), and installed into
 *       the tables later by the flusher;
 *   <li>{@value #PLACED_NAME}: log mode with placed values ({@code placeValuesFrom(}{@value
 *       #PLACE_FROM}{@code )}): a put of a value that large writes its entry into the heap first,
 *       and its log record names the block, so the value is written once, not in the log and
 *       again at its install; each group commit carrying such records syncs the device before it
 *       writes its frames;
 *   <li>{@value #DIRECT_NAME}: direct mode ({@code directMode(true)}): a put writes its entry and
 *       links it in place, each sync shared by the puts of other threads running at the same time.
 * </ul>
 */
final class HtodKeyValueStore implements KeyValueStore {
    static final String NAME = "htod";
    static final String RAW_NAME = "htod-raw";
    static final String UNMAPPED_NAME = "htod-unmapped";
    static final String LOG_NAME = "htod-log";
    static final String DIRECT_NAME = "htod-direct";
    static final String PLACED_NAME = "htod-log-placed";
    /** Value bytes from which {@value #PLACED_NAME} places values: the 4,000-byte ones, not the 200-byte ones. */
    static final int PLACE_FROM = 1024;
    /** Bound of the raw store's file: a sparse file grows only as the heap does. */
    private static final long RAW_CAPACITY = 256L << 30;

    private final String name;
    private final Path dir;
    private final Durability durability;
    private final HtodStore store;
    private final HtodMap<byte[], byte[]> map;
    /** Whether htod's own durability makes puts durable (the durable-put stores): no sync here. */
    private final boolean nativeSync;
    /** The device's I/O counts; null but for the durable-put stores. */
    private final CountingDevice counting;
    /** When the store had opened: {@link #ioSummary} gives the flusher's time at work against the time since. */
    private final long openedNanos;

    /** {@code name}: {@value #NAME}, {@value #UNMAPPED_NAME} or {@value #RAW_NAME}. */
    HtodKeyValueStore(Path dir, Durability durability, String name) {
        this.name = name;
        this.dir = dir;
        this.durability = durability;
        this.nativeSync = false;
        this.counting = null;
        Htod.Builder b = name.equals(RAW_NAME) ? Htod.builder(RawDevice.open(dir.resolve("store.raw"), RAW_CAPACITY))
                : Htod.builder(dir.resolve("store.htod")).mapReads(!name.equals(UNMAPPED_NAME));
        this.store = b.durability(org.htod.Durability.NONE).open();
        this.map = store.map("objects", Codec.bytes(), Codec.bytes());
        this.openedNanos = System.nanoTime();
    }

    /**
     * A store at htod's own {@code Durability.SYNC} on a {@code FileDevice}: {@code name} is
     * {@value #LOG_NAME}, {@value #PLACED_NAME} or {@value #DIRECT_NAME}. Safe for puts from many
     * threads at once.
     */
    static HtodKeyValueStore durable(Path dir, String name) {
        return new HtodKeyValueStore(dir, name);
    }

    private HtodKeyValueStore(Path dir, String durableName) {
        this.name = durableName;
        this.dir = dir;
        this.durability = Durability.SYNC;
        this.nativeSync = true;
        // no seek distance: its shared atomic per I/O would be a cost of the benchmark, not of htod
        this.counting = new CountingDevice(FileDevice.open(dir.resolve("store.htod")), false);
        this.store = Htod.builder(counting).directMode(durableName.equals(DIRECT_NAME))
                .placeValuesFrom(durableName.equals(PLACED_NAME) ? PLACE_FROM : 0)
                .durability(org.htod.Durability.SYNC).open();
        this.map = store.map("objects", Codec.bytes(), Codec.bytes());
        this.openedNanos = System.nanoTime();
    }

    /**
     * For the durable-put stores, what the device did so far: syncs, bytes written and, in log
     * mode, the group commits and the records they carried, and how often and how long writers
     * waited for room in the write buffer and in the log (the flusher behind them), and the
     * installs' reads of chains from the device and from the entry cache, and the seconds the
     * flusher spent at work against those since the store opened (near them, the flusher set the
     * pace); null for the others.
     */
    String ioSummary(long puts) {
        if (counting == null) {
            return null;
        }
        String line = DurableStores.ioLine(puts, counting.counts(), logGroups());
        StoreStats.WriteLayerFigures w = store.stats().writeLayer();
        return w == null ? line
                : line + String.format(java.util.Locale.ROOT, " bufferWaits=%d bufferWaitSeconds=%.3f logWaits=%d"
                        + " logWaitSeconds=%.3f installReads=%d installReadsCached=%d flusherBusySeconds=%.3f"
                        + " openSeconds=%.3f", w.bufferWaits(), w.bufferWaitSeconds(), w.logWaits(),
                        w.logWaitSeconds(), w.installReads(), w.installReadsCached(), w.flusherBusySeconds(),
                        (System.nanoTime() - openedNanos) / 1e9);
    }

    /**
     * The log's group commits and the records they carried, read from the write layer's log (not
     * published by {@code HtodStore}, so read by reflection); null in direct mode or when the
     * fields are not found.
     */
    private long[] logGroups() {
        try {
            Field layerField = HtodStore.class.getDeclaredField("layer");
            layerField.setAccessible(true);
            Object layer = layerField.get(store);
            if (layer == null) {
                return null;
            }
            Field logField = layer.getClass().getDeclaredField("log");
            logField.setAccessible(true);
            return ((Log) logField.get(layer)).groupCounts();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Durability durability() {
        return durability;
    }

    @Override
    public void put(byte[] key, byte[] value) {
        map.set(key, value); // a blind write: the interface does not return the old value, so it is not read
        if (durability == Durability.SYNC && !nativeSync) {
            store.sync();
        }
    }

    @Override
    public void putBatch(List<byte[]> keys, List<byte[]> values) {
        Map<byte[], byte[]> batch = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            batch.put(keys.get(i), values.get(i));
        }
        map.putAll(batch);
        if (durability == Durability.SYNC && !nativeSync) {
            store.sync();
        }
    }

    @Override
    public byte[] get(byte[] key) {
        return map.get(key);
    }

    @Override
    public boolean remove(byte[] key) {
        boolean removed = map.delete(key); // without reading the value, which the interface does not return
        if (removed && durability == Durability.SYNC && !nativeSync) {
            store.sync();
        }
        return removed;
    }

    @Override
    public void forEachKey(Consumer<byte[]> action) {
        map.keySet().forEach(action);
    }

    @Override
    public void forEachValue(Consumer<byte[]> action) {
        map.values().forEach(action);
    }

    @Override
    public void forEachEntry(BiConsumer<byte[], byte[]> action) {
        map.forEach(action);
    }

    @Override
    public void flush() {
        store.sync();
    }

    /** The write buffer installed into the tables and a checkpoint taken (nothing in direct mode). */
    @Override
    public void finishDeferred() {
        store.checkpoint();
    }

    /**
     * Log mode: the keys and bytes in the write buffer, not yet installed into the tables (none in
     * direct mode, where a put installs its own entry; its links waiting for a flush are made
     * durable by {@link #flush()}).
     */
    @Override
    public Map<String, Long> pending() {
        StoreStats.WriteLayerFigures w = store.stats().writeLayer();
        return w == null ? Map.of() : Map.of("bufferedKeys", w.bufferedKeys(), "bufferBytes", w.bufferBytes());
    }

    @Override
    public long diskBytes() {
        return DiskUsage.apparentBytes(dir);
    }

    @Override
    public void close() {
        store.close();
    }
}
