package org.htod.table;

/**
 * Where a table's buckets are, as readers see it: the array in use and, while doubling, the new
 * array with the number of old buckets moved so far. Immutable; replaced only with every view
 * lock of the table held (or, when readers would see no difference, every writer lock).
 */
final class Shape {
    final BucketArray array;
    /** The array twice the size while doubling, else null. */
    final BucketArray next;
    /** Doubling: old buckets [0, moved) live in {@link #next}. */
    final long moved;
    /** Doubling: old buckets [unzipFrom, moved) may be half-unzipped after a crash (see Doubler). */
    final long unzipFrom;

    Shape(BucketArray array, BucketArray next, long moved, long unzipFrom) {
        this.array = array;
        this.next = next;
        this.moved = moved;
        this.unzipFrom = unzipFrom;
    }

    Shape(BucketArray array) {
        this(array, null, 0, 0);
    }

    boolean doubling() {
        return next != null;
    }

    /** Buckets of the array in use (the old one while doubling). */
    long n() {
        return array.bucketCount;
    }

    /** The array holding the chain of {@code hash}. */
    BucketArray arrayOf(long hash) {
        return next != null && (hash & array.mask()) < moved ? next : array;
    }

    @Override
    public String toString() {
        return array.bucketCount + " buckets" + (next == null ? "" : ", doubling, " + moved + " moved, unzip from "
                + unzipFrom);
    }
}
