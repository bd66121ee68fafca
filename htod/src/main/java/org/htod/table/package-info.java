/**
 * The hashtable on disk behind every map: {@link org.htod.table.HashtableOnDisk} (chains of
 * entries per bucket, crash-safe write order, hashing by doubling), the root catalog of named
 * tables ({@link org.htod.table.TableStore}), recovery after a crash and the structural verifier.
 * Not exported: {@code org.htod} is the API. The layouts are in {@code docs/FORMAT.md}.
 */
package org.htod.table;
