package org.htod.core.alloc;

import java.util.ArrayList;
import java.util.List;

/** A heap journal for tests that look at what it was told: the handles allocated, and those freed, each in order. */
final class ListJournal implements Heap.Journal {
    final List<Long> allocated = new ArrayList<>();
    final List<Long> freed = new ArrayList<>();

    @Override
    public void allocated(long handle) {
        allocated.add(handle);
    }

    @Override
    public void freed(long handle) {
        freed.add(handle);
    }
}
