package org.htod.bench.store;

/**
 * What a store that must be sized up front (Chronicle Map) is told about the data it will hold.
 * Stores that grow on their own ignore it.
 *
 * @param entries the most entries expected at once
 * @param averageKeyBytes the mean key length
 * @param averageValueBytes the mean value length
 * @param maxValueBytes the largest value expected
 */
public record SizingHint(long entries, int averageKeyBytes, int averageValueBytes, int maxValueBytes) {

    public SizingHint {
        if (entries <= 0 || averageKeyBytes <= 0 || averageValueBytes <= 0 || maxValueBytes <= 0) {
            throw new IllegalArgumentException("sizing hint needs positive numbers, got " + entries
                    + " entries, " + averageKeyBytes + " B keys, " + averageValueBytes + " B values, max "
                    + maxValueBytes + " B");
        }
    }
}
