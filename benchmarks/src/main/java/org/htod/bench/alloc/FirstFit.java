package org.htod.bench.alloc;

import java.util.Map;
import java.util.TreeMap;

/**
 * A plain first-fit allocator over an address space, in memory: free blocks in address order,
 * the first that fits is split, and a freed block is coalesced with its neighbours at once. The
 * baseline the fragmentation experiment sets PMFLF beside; it does no I/O and so costs nothing
 * but space.
 */
final class FirstFit {
    private final long grain;
    private final TreeMap<Long, Long> free = new TreeMap<>(); // address -> size
    private long tail;
    private long highWater;
    private long allocated;
    private long requested;

    FirstFit(long grain) {
        this.grain = grain;
    }

    /** Allocates a block for {@code bytes} (header included by the caller); returns its address. */
    long allocate(long bytes) {
        long size = (bytes + grain - 1) / grain * grain;
        long addr = -1;
        for (Map.Entry<Long, Long> e : free.entrySet()) {
            if (e.getValue() >= size) {
                addr = e.getKey();
                long rest = e.getValue() - size;
                free.remove(addr);
                if (rest > 0) {
                    free.put(addr + size, rest);
                }
                break;
            }
        }
        if (addr < 0) {
            addr = tail;
            tail += size;
            highWater = Math.max(highWater, tail);
        }
        allocated += size;
        requested += bytes;
        return addr;
    }

    void free(long addr, long bytes) {
        long size = (bytes + grain - 1) / grain * grain;
        allocated -= size;
        requested -= bytes;
        long start = addr;
        long end = addr + size;
        Map.Entry<Long, Long> before = free.floorEntry(addr);
        if (before != null && before.getKey() + before.getValue() == addr) {
            start = before.getKey();
            free.remove(start);
        }
        Long after = free.get(end);
        if (after != null) {
            free.remove(end);
            end += after;
        }
        if (end == tail) {
            tail = start;
        } else {
            free.put(start, end - start);
        }
    }

    double internal() {
        return (double) allocated / requested;
    }

    double external() {
        return (double) highWater / allocated;
    }
}
