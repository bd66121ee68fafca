package org.htod.core.container;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.htod.core.CorruptStoreException;
import org.htod.core.HtodException;
import org.htod.core.IncompatibleFormatException;
import org.htod.core.NotAStoreException;
import org.htod.core.StoreClosedException;
import org.htod.core.device.BlockDevice;

/**
 * One htod container: a file or device that starts with two superblock slots, then the log
 * region, then the heap region.
 *
 * <pre>
 * [slot A: 4096 bytes at 0][slot B: 4096 bytes at 4096][log: logSize bytes at 8192][heap: heapCapacity bytes]
 * </pre>
 *
 * <p>Every update writes the new superblock to both slots, one after the other with a sync
 * between, so that each slot is either the superblock before the update or the one after it, and
 * at most one slot (the one being written when a crash came) can be torn. {@link #open} reads both
 * and takes the valid copy with the higher sequence. A crash at any moment of an {@link #update}
 * therefore leaves either the superblock before it or the one it was writing, never anything
 * older; and damage to one copy of a store at rest loses nothing, since the other holds the same
 * superblock.
 *
 * <p>This class owns only the superblock. The log and heap regions belong to their layers, which
 * write them through {@link #device()}. Thread-safe: updates are serialized.
 */
public final class Container implements AutoCloseable {
    private static final SecureRandom STORE_IDS = new SecureRandom();

    private final BlockDevice device;
    private final String name;
    private volatile Superblock current;
    private volatile boolean closed;
    /** The error of a superblock write whose outcome on disk is unknown; no update after it. */
    private RuntimeException failure;

    private Container(BlockDevice device, Superblock current) {
        this.device = device;
        this.name = device.name();
        this.current = current;
    }

    /**
     * Creates a container on an empty device, or on one that does not hold an htod store: writes
     * the superblock with sequence 1 to both slots, in one write, then syncs.
     * Only the two slots are written; the log and heap regions are left to their layers.
     *
     * @throws HtodException if either slot of the device already starts with the htod magic
     * @throws IllegalArgumentException if the device's sector size is not a power of two between
     *     512 and 4096, or the configured regions do not fit the device
     */
    public static Container create(BlockDevice dev, ContainerConfig cfg) {
        long id;
        do {
            id = STORE_IDS.nextLong();
        } while (id == 0);
        return create(dev, cfg, id, System.currentTimeMillis());
    }

    /** {@link #create(BlockDevice, ContainerConfig)} with a chosen identity, for reproducible stores. */
    static Container create(BlockDevice dev, ContainerConfig cfg, long storeId, long createdMillis) {
        Objects.requireNonNull(dev, "dev");
        Objects.requireNonNull(cfg, "cfg");
        int sectorSize = dev.sectorSize();
        try {
            Limits.sectorSize(sectorSize);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(dev.name() + ": device " + e.getMessage(), e);
        }
        refuseExistingStore(dev);
        long heapOffset = Superblock.LOG_OFFSET + cfg.logSize();
        long heapCapacity = heapCapacityFor(dev, cfg, heapOffset);
        Superblock first = new Superblock(1, storeId, createdMillis, sectorSize, Superblock.LOG_OFFSET,
                cfg.logSize(), heapOffset, heapCapacity, cfg.storageMethod(), false, cfg.grain(),
                cfg.maxQuickList(), cfg.acceptableWaste(), cfg.obaThreshold(), 0, 0, 0, 0, Superblock.LogState.NONE);
        ByteBuffer both = ByteBuffer.allocate(2 * Superblock.SLOT_SIZE);
        both.put(first.encode()).put(first.encode()).flip();
        dev.write(Superblock.SLOT_A_OFFSET, both);
        dev.sync();
        return new Container(dev, first);
    }

    private static void refuseExistingStore(BlockDevice dev) {
        long size = dev.size();
        for (long slot : new long[] {Superblock.SLOT_A_OFFSET, Superblock.SLOT_B_OFFSET}) {
            if (size >= slot + Superblock.MAGIC.length()) {
                ByteBuffer magic = ByteBuffer.allocate(Superblock.MAGIC.length());
                dev.read(slot, magic);
                if (Superblock.hasMagic(magic.flip())) {
                    throw new HtodException(dev.name() + " already holds an htod store (magic " + Superblock.MAGIC
                            + " at offset " + slot + "); open it, or erase the device before creating a store");
                }
            }
        }
    }

    private static long heapCapacityFor(BlockDevice dev, ContainerConfig cfg, long heapOffset) {
        long capacity = dev.capacity();
        boolean fixed = capacity != Long.MAX_VALUE;
        long room = capacity - heapOffset;
        long heapCapacity;
        if (cfg.heapCapacity().isPresent()) {
            heapCapacity = cfg.heapCapacity().getAsLong();
            if (fixed && heapCapacity > room) {
                throw new IllegalArgumentException(dev.name() + " holds " + capacity + " bytes, too few for a heap of "
                        + heapCapacity + " bytes at offset " + heapOffset + " (room for " + Math.max(room, 0) + ")");
            }
        } else {
            heapCapacity = fixed ? room : ContainerConfig.DEFAULT_FILE_HEAP_CAPACITY;
        }
        if (heapCapacity < cfg.grain()) {
            throw new IllegalArgumentException(dev.name() + " holds " + capacity + " bytes, too few for a heap of"
                    + " at least one grain (" + cfg.grain() + " bytes) at offset " + heapOffset);
        }
        return heapCapacity;
    }

    /**
     * Opens the container on a device: reads both superblock slots and takes the valid copy with
     * the higher sequence. One damaged copy is tolerated; the next {@link #update} overwrites it.
     *
     * @throws NotAStoreException if neither slot holds anything that looks like a superblock
     * @throws CorruptStoreException if a slot holds a superblock but no copy is valid, if the two
     *     valid copies belong to different stores, or if the regions do not fit the device
     * @throws IncompatibleFormatException if an intact copy has another format version
     */
    public static Container open(BlockDevice dev) {
        Objects.requireNonNull(dev, "dev");
        String name = dev.name();
        int sectorSize = dev.sectorSize();
        if (sectorSize > Superblock.SLOT_SIZE) {
            throw new HtodException(name + " has sectors of " + sectorSize + " bytes, larger than a superblock slot ("
                    + Superblock.SLOT_SIZE + "): the two copies would share a sector");
        }
        long size = dev.size();
        if (size == 0) {
            throw new NotAStoreException(name + " is not an htod store: expected magic " + Superblock.MAGIC
                    + " at offset 0, found an empty device");
        }
        Copy a = Copy.read(dev, Superblock.SLOT_A_OFFSET, size);
        Copy b = Copy.read(dev, Superblock.SLOT_B_OFFSET, size);
        Superblock chosen = choose(name, a, b);
        checkFitsDevice(dev, chosen, a.superblock == chosen ? a.offset : b.offset);
        return new Container(dev, chosen);
    }

    private static Superblock choose(String name, Copy a, Copy b) {
        // An intact copy of another format version decides, even beside a valid one: this library
        // cannot tell whether it is the newer of the two.
        IncompatibleFormatException incompatible = null;
        for (Copy c : new Copy[] {a, b}) {
            if (c.error instanceof IncompatibleFormatException) {
                IncompatibleFormatException e = (IncompatibleFormatException) c.error;
                if (incompatible == null || e.isTooNew() && !incompatible.isTooNew()) {
                    incompatible = e;
                }
            }
        }
        if (incompatible != null) {
            throw incompatible;
        }
        if (a.superblock != null && b.superblock != null) {
            if (a.superblock.storeId() != b.superblock.storeId()) {
                throw new CorruptStoreException(name + ": the two superblock copies belong to different stores:"
                        + " storeId " + hex64(a.superblock.storeId()) + " at offset " + a.offset + ", storeId "
                        + hex64(b.superblock.storeId()) + " at offset " + b.offset, a.offset);
            }
            return a.superblock.sequence() > b.superblock.sequence() ? a.superblock : b.superblock;
        }
        if (a.superblock != null) {
            return a.superblock;
        }
        if (b.superblock != null) {
            return b.superblock;
        }
        if (a.error instanceof NotAStoreException && b.error instanceof NotAStoreException) {
            throw new NotAStoreException(a.error.getMessage() + "; and at offset " + b.offset + ", found "
                    + b.foundMagic());
        }
        Copy damaged = a.error instanceof CorruptStoreException ? a : b;
        throw new CorruptStoreException(name + " has no valid superblock: copy A: " + a.describeError(name)
                + "; copy B: " + b.describeError(name), ((CorruptStoreException) damaged.error).offset());
    }

    private static void checkFitsDevice(BlockDevice dev, Superblock sb, long slotOffset) {
        long capacity = dev.capacity();
        if (sb.heapOffset() > capacity) {
            throw new CorruptStoreException(dev.name() + ": superblock at offset " + slotOffset + ": field heapOffset"
                    + " at offset " + (slotOffset + Superblock.HEAP_OFFSET_OFFSET) + ": expected at most the device"
                    + " capacity " + capacity + ", found " + sb.heapOffset(), slotOffset + Superblock.HEAP_OFFSET_OFFSET);
        }
        if (sb.heapCapacity() > capacity - sb.heapOffset()) {
            throw new CorruptStoreException(dev.name() + ": superblock at offset " + slotOffset + ": field heapCapacity"
                    + " at offset " + (slotOffset + Superblock.HEAP_CAPACITY_OFFSET) + ": expected at most "
                    + (capacity - sb.heapOffset()) + " (device capacity " + capacity + " - heapOffset "
                    + sb.heapOffset() + "), found " + sb.heapCapacity(), slotOffset + Superblock.HEAP_CAPACITY_OFFSET);
        }
    }

    /** The current superblock: the last one written by {@link #update}, or the one opened. */
    public Superblock superblock() {
        ensureOpen();
        return current;
    }

    /**
     * Replaces the superblock. {@code change} receives the current superblock and returns the next
     * one; its sequence is set to the current one plus 1. The device is synced, the next superblock
     * written to slot A and synced, then to slot B and synced; only then does it become current.
     * The first sync makes every write issued before this call durable before a superblock can
     * point at it; the one between the slots keeps one intact copy on disk at every moment.
     *
     * <p>If a write or sync fails, the slot written may hold either superblock once the device
     * comes back; the container then refuses further updates, and reopening tells which one won.
     *
     * @return the superblock now current, with its sequence
     * @throws IllegalArgumentException if the next superblock changes the store's identity or
     *     geometry (storeId, createdMillis, sectorSize, regions, storageMethod, grain)
     * @throws StoreClosedException if the container is closed
     */
    public synchronized Superblock update(UnaryOperator<Superblock> change) {
        ensureOpen();
        if (failure != null) {
            throw new HtodException(name + ": an earlier superblock write failed, so the slot it wrote is in an"
                    + " unknown state; close and reopen the store", failure);
        }
        Superblock cur = current;
        Superblock next = Objects.requireNonNull(change.apply(cur), "the changed superblock");
        requireSameGeometry(cur, next);
        next = next.withSequence(cur.sequence() + 1);
        ByteBuffer slot = next.encode();
        try {
            device.sync();
            device.write(Superblock.SLOT_A_OFFSET, slot.duplicate());
            device.sync();
            device.write(Superblock.SLOT_B_OFFSET, slot);
            device.sync();
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        }
        current = next;
        return next;
    }

    private void requireSameGeometry(Superblock cur, Superblock next) {
        same("storeId", cur.storeId(), next.storeId());
        same("createdMillis", cur.createdMillis(), next.createdMillis());
        same("sectorSize", cur.sectorSize(), next.sectorSize());
        same("logOffset", cur.logOffset(), next.logOffset());
        same("logSize", cur.logSize(), next.logSize());
        same("heapOffset", cur.heapOffset(), next.heapOffset());
        same("heapCapacity", cur.heapCapacity(), next.heapCapacity());
        same("grain", cur.grain(), next.grain());
        if (cur.storageMethod() != next.storageMethod()) {
            throw new IllegalArgumentException(name + ": an update may not change storageMethod (from "
                    + cur.storageMethod() + " to " + next.storageMethod() + ")");
        }
    }

    private void same(String field, long cur, long next) {
        if (cur != next) {
            throw new IllegalArgumentException(name + ": an update may not change " + field + " (from " + cur
                    + " to " + next + ")");
        }
    }

    /** The device under the container; every layer writes its region through it. */
    public synchronized BlockDevice device() {
        ensureOpen();
        return device;
    }

    /** The device's name, for messages; available after close too. */
    public String name() {
        return name;
    }

    /** Closes the device. Does not write the superblock; idempotent. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            device.close();
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreClosedException("container on " + name + " is closed");
        }
    }

    @Override
    public String toString() {
        return "Container[" + name + ", sequence " + current.sequence() + "]";
    }

    static String hex64(long v) {
        return String.format("0x%016x", v);
    }

    /** What one slot held: a superblock, or the error decoding it. */
    private static final class Copy {
        final long offset;
        final ByteBuffer bytes;
        final Superblock superblock;
        final HtodException error;

        private Copy(long offset, ByteBuffer bytes, Superblock superblock, HtodException error) {
            this.offset = offset;
            this.bytes = bytes;
            this.superblock = superblock;
            this.error = error;
        }

        /** Reads the slot; bytes past the end of the device read as zero, as unwritten bytes do. */
        static Copy read(BlockDevice dev, long offset, long deviceSize) {
            ByteBuffer bytes = ByteBuffer.allocate(Superblock.SLOT_SIZE);
            long present = Math.max(0, Math.min(Superblock.SLOT_SIZE, deviceSize - offset));
            if (present > 0) {
                dev.read(offset, bytes.limit((int) present));
            }
            bytes.clear();
            try {
                return new Copy(offset, bytes, Superblock.decode(bytes, dev.name(), offset), null);
            } catch (NotAStoreException | CorruptStoreException | IncompatibleFormatException e) {
                return new Copy(offset, bytes, null, e);
            }
        }

        String foundMagic() {
            return Superblock.describeBytes(bytes, 0, Superblock.MAGIC.length());
        }

        /** The error without the leading device name, for a message that names it once. */
        String describeError(String deviceName) {
            if (error instanceof NotAStoreException) {
                return "expected magic " + Superblock.MAGIC + " at offset " + offset + ", found " + foundMagic();
            }
            String message = error.getMessage();
            String prefix = deviceName + ": ";
            return message.startsWith(prefix) ? message.substring(prefix.length()) : message;
        }
    }
}
