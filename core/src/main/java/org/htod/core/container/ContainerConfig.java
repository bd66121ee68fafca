package org.htod.core.container;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * The choices fixed when a container is created: the heap's storage method and allocator
 * parameters, and the size of the log and heap regions. Immutable; build one with {@link
 * #builder()}. Defaults follow Table 4 of the core paper (grain 512, 75 quick lists, acceptable
 * waste 2000 bytes).
 */
public final class ContainerConfig {
    public static final StorageMethod DEFAULT_STORAGE_METHOD = StorageMethod.TS;
    public static final int DEFAULT_GRAIN = 512;
    public static final int DEFAULT_MAX_QUICK_LIST = 75;
    public static final int DEFAULT_ACCEPTABLE_WASTE = 2000;
    public static final int DEFAULT_OBA_THRESHOLD = 8192;
    public static final long DEFAULT_LOG_SIZE = 64L << 20;
    /** Heap capacity of a store on a device without a fixed capacity (a file): 1 TiB, sparse. */
    public static final long DEFAULT_FILE_HEAP_CAPACITY = 1L << 40;

    private static final ContainerConfig DEFAULTS = builder().build();

    private final StorageMethod storageMethod;
    private final int grain;
    private final int maxQuickList;
    private final int acceptableWaste;
    private final int obaThreshold;
    private final long logSize;
    private final long heapCapacity; // 0: decided from the device at creation

    private ContainerConfig(Builder b) {
        this.storageMethod = b.storageMethod;
        this.grain = b.grain;
        this.maxQuickList = b.maxQuickList;
        this.acceptableWaste = b.acceptableWaste;
        this.obaThreshold = b.obaThreshold;
        this.logSize = b.logSize;
        this.heapCapacity = b.heapCapacity;
    }

    /** Every parameter at its default. */
    public static ContainerConfig defaults() {
        return DEFAULTS;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this configuration's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.storageMethod = storageMethod;
        b.grain = grain;
        b.maxQuickList = maxQuickList;
        b.acceptableWaste = acceptableWaste;
        b.obaThreshold = obaThreshold;
        b.logSize = logSize;
        b.heapCapacity = heapCapacity;
        return b;
    }

    public StorageMethod storageMethod() {
        return storageMethod;
    }

    /** Allocation unit of the heap in bytes: every block is a whole number of grains. */
    public int grain() {
        return grain;
    }

    /** Number of quick lists (maxQL): sizes {@code grain .. maxQuickList * grain} have one each. */
    public int maxQuickList() {
        return maxQuickList;
    }

    /** Bytes a block may exceed a request by before it is split (w). */
    public int acceptableWaste() {
        return acceptableWaste;
    }

    /** Smallest free block, in bytes, that batch allocation (OBA) places objects into (T). */
    public int obaThreshold() {
        return obaThreshold;
    }

    /** Bytes of the log region; a multiple of 4096, possibly 0. */
    public long logSize() {
        return logSize;
    }

    /**
     * Bytes the heap may grow to, when set explicitly. When empty, creation uses the room left on a
     * device with a fixed capacity, or {@link #DEFAULT_FILE_HEAP_CAPACITY} on a file.
     */
    public OptionalLong heapCapacity() {
        return heapCapacity == 0 ? OptionalLong.empty() : OptionalLong.of(heapCapacity);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ContainerConfig)) {
            return false;
        }
        ContainerConfig c = (ContainerConfig) o;
        return storageMethod == c.storageMethod && grain == c.grain && maxQuickList == c.maxQuickList
                && acceptableWaste == c.acceptableWaste && obaThreshold == c.obaThreshold
                && logSize == c.logSize && heapCapacity == c.heapCapacity;
    }

    @Override
    public int hashCode() {
        return Objects.hash(storageMethod, grain, maxQuickList, acceptableWaste, obaThreshold, logSize, heapCapacity);
    }

    @Override
    public String toString() {
        return "ContainerConfig[storageMethod=" + storageMethod + ", grain=" + grain + ", maxQuickList="
                + maxQuickList + ", acceptableWaste=" + acceptableWaste + ", obaThreshold=" + obaThreshold
                + ", logSize=" + logSize + ", heapCapacity="
                + (heapCapacity == 0 ? "from device" : Long.toString(heapCapacity)) + "]";
    }

    /** Collects parameters; each setter rejects a bad value at once with a message naming it. */
    public static final class Builder {
        private StorageMethod storageMethod = DEFAULT_STORAGE_METHOD;
        private int grain = DEFAULT_GRAIN;
        private int maxQuickList = DEFAULT_MAX_QUICK_LIST;
        private int acceptableWaste = DEFAULT_ACCEPTABLE_WASTE;
        private int obaThreshold = DEFAULT_OBA_THRESHOLD;
        private long logSize = DEFAULT_LOG_SIZE;
        private long heapCapacity;

        private Builder() {}

        public Builder storageMethod(StorageMethod method) {
            this.storageMethod = Objects.requireNonNull(method, "storageMethod");
            return this;
        }

        /** A multiple of 64, at least 64. */
        public Builder grain(int bytes) {
            this.grain = Limits.grain(bytes);
            return this;
        }

        /** At least 1. */
        public Builder maxQuickList(int lists) {
            this.maxQuickList = Limits.maxQuickList(lists);
            return this;
        }

        /** At least 0. */
        public Builder acceptableWaste(int bytes) {
            this.acceptableWaste = Limits.acceptableWaste(bytes);
            return this;
        }

        /** At least 0. */
        public Builder obaThreshold(int bytes) {
            this.obaThreshold = Limits.obaThreshold(bytes);
            return this;
        }

        /** A multiple of 4096; 0 for a store without a log region. */
        public Builder logSize(long bytes) {
            this.logSize = Limits.logSize(bytes);
            return this;
        }

        /** At least one grain; checked against the device when the container is created. */
        public Builder heapCapacity(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("heapCapacity must be positive, found " + bytes);
            }
            this.heapCapacity = bytes;
            return this;
        }

        /**
         * The configuration.
         *
         * @throws IllegalArgumentException if the heap capacity is below one grain or the regions
         *     would end past offset 2^63
         */
        public ContainerConfig build() {
            if (heapCapacity != 0) {
                Limits.heapCapacity(Superblock.LOG_OFFSET + logSize, heapCapacity, grain);
            }
            return new ContainerConfig(this);
        }
    }
}
