package org.htod.core.storage;

import org.htod.core.CorruptStoreException;
import org.htod.core.alloc.Heap;
import org.htod.core.alloc.HeapOptions;
import org.htod.core.alloc.HeapRecoveryReport;
import org.htod.core.container.Container;
import org.htod.core.container.ContainerConfig;
import org.htod.core.container.Superblock;
import org.htod.core.device.BlockDevice;

/**
 * One open store at the core level: the container (superblock) and its heap, opened together
 * with the clean-shutdown protocol:
 *
 * <ol>
 *   <li>open, in two steps. {@link #prepare} reads: if the superblock says clean and names a
 *       snapshot, the heap reads the snapshot; otherwise its storage method recovers, in memory.
 *       Nothing is written, so that the layers above can check their own structures first and
 *       an open that fails leaves the device as it found it. {@link #begin} then makes the writes
 *       recovery owes, and rewrites the superblock as not clean, with no snapshot, synced, before
 *       anything else is written (the first tail allocation may overwrite the snapshot). A store
 *       whose creation was cut short before its root catalog was recorded holds nothing yet, and
 *       its heap is formatted again.
 *   <li>close: the heap writes its snapshot past the tail and syncs; then the superblock records
 *       it and the clean flag, and is synced. A crash between the two leaves "not clean": the next
 *       open recovers, which is slower but never wrong.
 * </ol>
 */
public final class Storage implements AutoCloseable {
    private final Container container;
    private final Heap heap;
    private boolean closed;

    private boolean begun;

    private Storage(Container container, Heap heap, boolean begun) {
        this.container = container;
        this.heap = heap;
        this.begun = begun;
    }

    /** Formats a new store on {@code dev}. */
    public static Storage create(BlockDevice dev, ContainerConfig cfg) {
        Container c = Container.create(dev, cfg);
        Heap h = Heap.create(dev, heapOptions(c.superblock()));
        return new Storage(c, h, true);
    }

    /** Opens the store on {@code dev}, recovering it if it was not closed cleanly: {@link #prepare} and {@link #begin}. */
    public static Storage open(BlockDevice dev) {
        Storage s = prepare(dev);
        s.begin();
        return s;
    }

    /**
     * Reads the store on {@code dev} and rebuilds the heap's state in memory, writing nothing
     * (unless the store's creation was cut short, which this open completes); call {@link #begin}
     * before changing anything.
     *
     * @throws CorruptStoreException if the superblock names a root catalog but the heap region is
     *     missing (a truncated file), or anything read is damaged
     */
    public static Storage prepare(BlockDevice dev) {
        return prepare(dev, org.htod.core.StepListener.NONE);
    }

    /** {@link #prepare(BlockDevice)}, telling {@code progress} of the block headers a recovery of the heap reads. */
    public static Storage prepare(BlockDevice dev, org.htod.core.StepListener progress) {
        Container c = Container.open(dev);
        Superblock sb = c.superblock();
        HeapOptions opt = heapOptions(sb);
        if (sb.rootCatalog() == 0) {
            // Created up to the superblock, perhaps the heap, never the catalog: nothing was stored.
            return new Storage(c, Heap.create(dev, opt), true);
        }
        if (!Heap.isFormatted(dev, opt)) {
            throw new CorruptStoreException(dev.name() + ": expected the heap's checkpoint area at offset "
                    + sb.heapOffset() + " (the superblock names a root catalog at " + sb.rootCatalog() + "), found "
                    + (dev.size() <= sb.heapOffset() ? "the device ending at " + dev.size() : "zeros")
                    + ": the file was truncated or the heap region erased", sb.heapOffset());
        }
        Heap.SnapshotRef snap = sb.clean() && sb.snapshotLength() > 0
                ? new Heap.SnapshotRef(sb.snapshotOffset(), sb.snapshotLength()) : null;
        return new Storage(c, Heap.prepare(dev, opt, snap, progress), false);
    }

    /**
     * The writes an open owes, once the layers above found their structures sound: the heap's
     * recovery writes, then the superblock marked not clean, synced. Idempotent.
     */
    public synchronized void begin() {
        begin(s -> s.withSnapshot(0, 0));
    }

    /** {@link #begin()}, with {@code change} made to the superblock too (log mode keeps its checkpoint named). */
    public synchronized void begin(java.util.function.UnaryOperator<Superblock> change) {
        if (begun) {
            return;
        }
        heap.finishOpen();
        container.update(s -> change.apply(s.withClean(false)));
        begun = true;
    }

    /**
     * A store whose heap log mode restored from its checkpoint ({@code Heap.fromSnapshot}); {@link
     * #begin} once the log's recovery checked what it read.
     */
    public static Storage restored(Container c, Heap heap) {
        return new Storage(c, heap, false);
    }

    /** Replaces the superblock (see {@link Container#update}): log mode records each checkpoint so. */
    public Superblock update(java.util.function.UnaryOperator<Superblock> change) {
        return container.update(change);
    }

    /**
     * Closes the device without writing: log mode's close, whose last checkpoint already recorded
     * a clean store, or a store left for its recovery to find.
     */
    public synchronized void closeDevice() {
        closed = true;
        container.close();
    }

    /** Opens the store on {@code dev}, or creates one with {@code cfg} if the device is empty. */
    public static Storage openOrCreate(BlockDevice dev, ContainerConfig cfg) {
        return dev.size() == 0 ? create(dev, cfg) : open(dev);
    }

    public static HeapOptions heapOptions(Superblock sb) {
        return new HeapOptions(sb.storageMethod(), sb.heapOffset(), sb.heapCapacity(), sb.storeId(), sb.grain(),
                sb.maxQuickList(), sb.acceptableWaste(), sb.obaThreshold(), 1.5);
    }

    public Heap heap() {
        return heap;
    }

    public Container container() {
        return container;
    }

    public Superblock superblock() {
        return container.superblock();
    }

    /** What opening took and found (snapshot, scan or lists; repairs; time). */
    public HeapRecoveryReport recoveryReport() {
        return heap.recoveryReport();
    }

    /**
     * Handle of the root catalog block, 0 if none. The superblock records the block's address (an
     * offset in the heap region, as its format requires); the handle is rebuilt from the header
     * found there.
     */
    public long rootCatalog() {
        long address = container.superblock().rootCatalog();
        return address == 0 ? 0 : heap.handleAt(address);
    }

    /** Points the superblock at a new root catalog (0 for none); synced before it returns. */
    public void setRootCatalog(long handle) {
        long address = handle == 0 ? 0 : heap.address(handle);
        container.update(s -> s.withRootCatalog(address));
    }

    /**
     * Clean shutdown: heap snapshot, then the superblock marked clean; closes the device. A store
     * never begun is closed without a write.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!begun) {
            container.close();
            return;
        }
        try {
            Heap.SnapshotRef ref = heap.shutdown();
            if (ref != null) {
                container.update(s -> s.withClean(true).withSnapshot(ref.offset(), ref.length()));
            }
        } finally {
            container.close();
        }
    }
}
