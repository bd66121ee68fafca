package org.htod.core.alloc;

/**
 * A free block as the allocator keeps it in memory: enough to allocate it or split it without
 * reading its header first. {@code listPrev}/{@code listNext} mirror the on-disk free list for
 * the PFL method, where unlinking from the middle of a list costs a write to the predecessor
 * ({@link DiskLists}).
 */
final class FreeBlock {
    final long addr;
    final long size;
    final long stamp;
    /** PL/PFL disk list id; -1 while unknown (a PL block freed by handle, whose header was not read). */
    int listId;
    /** On-disk next pointer of this block (PL: fixed at creation; PFL: the free-list link). */
    long next;
    FreeBlock listPrev;
    FreeBlock listNext;

    FreeBlock(long addr, long size, long stamp, int listId, long next) {
        this.addr = addr;
        this.size = size;
        this.stamp = stamp;
        this.listId = listId;
        this.next = next;
    }

    void listIdKnown(int listId, long next) {
        this.listId = listId;
        this.next = next;
    }

    @Override
    public String toString() {
        return "FreeBlock[" + addr + "+" + size + "]";
    }
}
