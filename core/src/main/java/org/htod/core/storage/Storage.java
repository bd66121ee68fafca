package org.htod.core.storage;

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
 *   <li>open: if the superblock says clean and names a snapshot, the heap reads the snapshot;
 *       otherwise its storage method recovers. Then the superblock is rewritten as not clean, with
 *       no snapshot, and synced, before anything else is written (the first tail allocation may
 *       overwrite the snapshot).
 *   <li>close: the heap writes its snapshot past the tail and syncs; then the superblock records
 *       it and the clean flag, and is synced. A crash between the two leaves "not clean": the next
 *       open recovers, which is slower but never wrong.
 * </ol>
 */
public final class Storage implements AutoCloseable {
    private final Container container;
    private final Heap heap;
    private boolean closed;

    private Storage(Container container, Heap heap) {
        this.container = container;
        this.heap = heap;
    }

    /** Formats a new store on {@code dev}. */
    public static Storage create(BlockDevice dev, ContainerConfig cfg) {
        Container c = Container.create(dev, cfg);
        Heap h = Heap.create(dev, heapOptions(c.superblock()));
        return new Storage(c, h);
    }

    /** Opens the store on {@code dev}, recovering it if it was not closed cleanly. */
    public static Storage open(BlockDevice dev) {
        Container c = Container.open(dev);
        Superblock sb = c.superblock();
        HeapOptions opt = heapOptions(sb);
        Heap h;
        if (!Heap.isFormatted(dev, opt)) {
            // The creation of this store was interrupted after the superblock and before the heap.
            h = Heap.create(dev, opt);
        } else {
            Heap.SnapshotRef snap = sb.clean() && sb.snapshotLength() > 0
                    ? new Heap.SnapshotRef(sb.snapshotOffset(), sb.snapshotLength()) : null;
            h = Heap.open(dev, opt, snap);
        }
        c.update(s -> s.withClean(false).withSnapshot(0, 0));
        return new Storage(c, h);
    }

    /** Opens the store on {@code dev}, or creates one with {@code cfg} if the device is empty. */
    public static Storage openOrCreate(BlockDevice dev, ContainerConfig cfg) {
        return dev.size() == 0 ? create(dev, cfg) : open(dev);
    }

    static HeapOptions heapOptions(Superblock sb) {
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

    /** Clean shutdown: heap snapshot, then the superblock marked clean; closes the device. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
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
