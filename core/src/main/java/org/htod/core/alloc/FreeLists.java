package org.htod.core.alloc;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * PMFLF's in-memory free lists (paper §2.4): one quick list per size {@code n·g} for {@code n}
 * in {@code 1..maxQL}, then misc lists over disjoint, doubling size ranges starting at
 * {@code (maxQL+1)·g}. The list of a size is computed, not searched (the paper's "array indexed
 * by block sizes"). Quick lists are LIFO; a misc list is ordered by size so that the smallest
 * fitting block is found without scanning. Not thread-safe: the heap's lock guards it.
 */
final class FreeLists {
    private final int grain;
    private final int maxQuickList;
    private final long firstMisc;
    private final List<ArrayDeque<FreeBlock>> quick = new ArrayList<>();
    private final List<TreeMap<Long, ArrayDeque<FreeBlock>>> misc = new ArrayList<>();
    private final int listCount;
    private long freeBytes;
    private long freeCount;

    FreeLists(int grain, int maxQuickList) {
        this.grain = grain;
        this.maxQuickList = maxQuickList;
        this.firstMisc = (long) (maxQuickList + 1) * grain;
        for (int i = 0; i < maxQuickList; i++) {
            quick.add(new ArrayDeque<>());
        }
        int miscLists = 64 - Long.numberOfLeadingZeros(Long.MAX_VALUE / firstMisc);
        for (int i = 0; i < miscLists; i++) {
            misc.add(new TreeMap<>());
        }
        this.listCount = maxQuickList + miscLists;
    }

    /** Number of lists, quick and misc: the list ids are {@code 0..listCount-1}. */
    int listCount() {
        return listCount;
    }

    /** The list a block of {@code size} bytes belongs to. */
    int listOf(long size) {
        long n = size / grain;
        if (n <= maxQuickList) {
            return (int) n - 1;
        }
        return maxQuickList + (63 - Long.numberOfLeadingZeros(size / firstMisc));
    }

    boolean isQuick(int listId) {
        return listId < maxQuickList;
    }

    void add(FreeBlock b) {
        int list = listOf(b.size);
        if (isQuick(list)) {
            quick.get(list).addFirst(b);
        } else {
            misc.get(list - maxQuickList).computeIfAbsent(b.size, s -> new ArrayDeque<>()).addFirst(b);
        }
        freeBytes += b.size;
        freeCount++;
    }

    void remove(FreeBlock b) {
        int list = listOf(b.size);
        boolean removed;
        if (isQuick(list)) {
            // a quick list gives up its newest block (single allocations) or its oldest (OBA's
            // reuse): both ends are taken without a walk of what may be tens of thousands
            ArrayDeque<FreeBlock> q = quick.get(list);
            if (q.peekFirst() == b) {
                removed = q.pollFirst() != null;
            } else if (q.peekLast() == b) {
                removed = q.pollLast() != null;
            } else {
                removed = q.remove(b);
            }
        } else {
            TreeMap<Long, ArrayDeque<FreeBlock>> m = misc.get(list - maxQuickList);
            ArrayDeque<FreeBlock> q = m.get(b.size);
            removed = q != null && q.remove(b);
            if (q != null && q.isEmpty()) {
                m.remove(b.size);
            }
        }
        if (!removed) {
            throw new IllegalStateException("free block " + b + " is not on its list");
        }
        freeBytes -= b.size;
        freeCount--;
    }

    /**
     * The smallest block of at least {@code size} bytes on list {@code listId} that {@code usable}
     * accepts, or null. On a quick list every block has the same size, so the first usable wins.
     */
    FreeBlock smallestAtLeast(int listId, long size, Predicate<FreeBlock> usable) {
        if (isQuick(listId)) {
            for (FreeBlock b : quick.get(listId)) {
                if (b.size >= size && usable.test(b)) {
                    return b;
                }
            }
            return null;
        }
        for (Map.Entry<Long, ArrayDeque<FreeBlock>> e : misc.get(listId - maxQuickList).tailMap(size, true).entrySet()) {
            for (FreeBlock b : e.getValue()) {
                if (usable.test(b)) {
                    return b;
                }
            }
        }
        return null;
    }

    /** Blocks on quick list {@code listId}. */
    int quickSize(int listId) {
        return quick.get(listId).size();
    }

    /** The blocks of quick list {@code listId}, the one freed longest ago first. */
    Iterator<FreeBlock> oldestFirst(int listId) {
        return quick.get(listId).descendingIterator();
    }

    /**
     * Takes off quick list {@code listId} those of its oldest blocks, {@code oldest} (the oldest
     * first, as {@link #oldestFirst} gave them), that {@code take} marks: one pass over those,
     * where a {@link #remove} of each from the list's middle would move the list's elements once
     * a block. Changes nothing if the list's oldest blocks are not {@code oldest}.
     */
    void removeFromQuick(int listId, FreeBlock[] oldest, boolean[] take) {
        ArrayDeque<FreeBlock> q = quick.get(listId);
        Iterator<FreeBlock> it = q.descendingIterator();
        for (FreeBlock b : oldest) {
            if (!it.hasNext() || it.next() != b) {
                throw new IllegalStateException("the " + oldest.length + " oldest blocks of quick list " + listId
                        + " changed since they were chosen from");
            }
        }
        for (int i = 0; i < oldest.length; i++) {
            q.pollLast();
        }
        for (int i = oldest.length - 1; i >= 0; i--) {
            if (take[i]) {
                freeBytes -= oldest[i].size;
                freeCount--;
            } else {
                q.addLast(oldest[i]); // back in their order, after the newer blocks
            }
        }
    }

    /** Every free block, in no particular order. */
    List<FreeBlock> all() {
        List<FreeBlock> out = new ArrayList<>((int) Math.min(freeCount, Integer.MAX_VALUE));
        for (ArrayDeque<FreeBlock> q : quick) {
            out.addAll(q);
        }
        for (TreeMap<Long, ArrayDeque<FreeBlock>> m : misc) {
            for (ArrayDeque<FreeBlock> q : m.values()) {
                out.addAll(q);
            }
        }
        return out;
    }

    /** Free blocks of at least {@code min} bytes, for OBA's best fit. */
    List<FreeBlock> atLeast(long min) {
        List<FreeBlock> out = new ArrayList<>();
        for (int l = listOf(Math.max(min, grain)); l < listCount; l++) {
            if (isQuick(l)) {
                for (FreeBlock b : quick.get(l)) {
                    if (b.size >= min) {
                        out.add(b);
                    }
                }
            } else {
                for (Iterator<ArrayDeque<FreeBlock>> it = misc.get(l - maxQuickList).tailMap(min, true).values().iterator();
                        it.hasNext();) {
                    out.addAll(it.next());
                }
            }
        }
        return out;
    }

    void clear() {
        quick.forEach(ArrayDeque::clear);
        misc.forEach(TreeMap::clear);
        freeBytes = 0;
        freeCount = 0;
    }

    long freeBytes() {
        return freeBytes;
    }

    long freeCount() {
        return freeCount;
    }
}
