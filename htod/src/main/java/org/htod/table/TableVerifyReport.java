package org.htod.table;

/**
 * What the structural verifier ({@link TableVerifier}) counted on a sound store; damage is thrown
 * as a {@code CorruptStoreException} instead. The store's public result is {@code
 * org.htod.VerifyReport}. {@code longestChain}, the most entries of one bucket in any table (the
 * catalog's included), shows keys crowding one bucket.
 */
public record TableVerifyReport(int tables, long entries, long reachedBlocks, long allocatedBlocks, long longestChain) {}
