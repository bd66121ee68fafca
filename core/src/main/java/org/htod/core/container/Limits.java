package org.htod.core.container;

/**
 * The bounds every container parameter must respect, checked in one place so that a
 * configuration the builder accepts is exactly one the superblock decoder accepts. Each check
 * throws {@link IllegalArgumentException} with the parameter, the bound and the value found.
 */
final class Limits {
    /** Grains are whole cache lines so that block headers and payloads stay aligned. */
    static final int GRAIN_ALIGNMENT = 64;
    /** Largest grain; keeps {@code maxQuickList * grain} and block sizes in grains well inside a long. */
    static final int MAX_GRAIN = 1 << 30;
    /** Most quick lists; each one is a list head in memory and, for PL and PFL, on disk. */
    static final int MAX_QUICK_LISTS = 1 << 16;
    /** The log region is a whole number of superblock slots, so the heap starts slot-aligned. */
    static final int LOG_ALIGNMENT = Superblock.SLOT_SIZE;
    /** Smallest device sector this layout supports: the superblock record must fit one sector. */
    static final int MIN_SECTOR_SIZE = 512;

    private Limits() {}

    static int grain(int grain) {
        if (grain < GRAIN_ALIGNMENT || grain > MAX_GRAIN || grain % GRAIN_ALIGNMENT != 0) {
            throw new IllegalArgumentException("grain must be a multiple of " + GRAIN_ALIGNMENT + " between "
                    + GRAIN_ALIGNMENT + " and " + MAX_GRAIN + " bytes, found " + grain);
        }
        return grain;
    }

    static int maxQuickList(int maxQuickList) {
        if (maxQuickList < 1 || maxQuickList > MAX_QUICK_LISTS) {
            throw new IllegalArgumentException("maxQuickList must be between 1 and " + MAX_QUICK_LISTS
                    + ", found " + maxQuickList);
        }
        return maxQuickList;
    }

    static int acceptableWaste(int bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("acceptableWaste must be at least 0 bytes, found " + bytes);
        }
        return bytes;
    }

    static int obaThreshold(int bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("obaThreshold must be at least 0 bytes, found " + bytes);
        }
        return bytes;
    }

    static long logSize(long bytes) {
        if (bytes < 0 || bytes % LOG_ALIGNMENT != 0 || bytes > Long.MAX_VALUE - Superblock.LOG_OFFSET) {
            throw new IllegalArgumentException("logSize must be a non-negative multiple of " + LOG_ALIGNMENT
                    + " bytes, found " + bytes);
        }
        return bytes;
    }

    /** The heap must hold at least one grain and end before offset 2^63. */
    static long heapCapacity(long heapOffset, long capacity, int grain) {
        if (capacity < grain || capacity > Long.MAX_VALUE - heapOffset) {
            throw new IllegalArgumentException("heapCapacity must be between one grain (" + grain + " bytes) and "
                    + (Long.MAX_VALUE - heapOffset) + " bytes, found " + capacity);
        }
        return capacity;
    }

    static int sectorSize(int sectorSize) {
        if (sectorSize < MIN_SECTOR_SIZE || sectorSize > Superblock.SLOT_SIZE || Integer.bitCount(sectorSize) != 1) {
            throw new IllegalArgumentException("sectorSize must be a power of two between " + MIN_SECTOR_SIZE
                    + " and " + Superblock.SLOT_SIZE + " bytes, found " + sectorSize);
        }
        return sectorSize;
    }
}
