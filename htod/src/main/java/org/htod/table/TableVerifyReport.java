package org.htod.table;

/**
 * What the structural verifier ({@link TableVerifier}) counted on a sound store; damage is thrown
 * as a {@code CorruptStoreException} instead. The store's public result is {@code
 * org.htod.VerifyReport}.
 */
public record TableVerifyReport(int tables, long entries, long reachedBlocks, long allocatedBlocks) {}
