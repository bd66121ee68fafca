package org.htod;

/**
 * How the heap keeps track of its blocks (core paper §2.1-2.3); chosen when a store is created.
 * See {@code docs/FORMAT.md} for what each costs at allocation and at recovery.
 */
public enum StorageMethod {
    /** Tagged size: size and status in each block header; recovery scans the headers. The default. */
    TS(org.htod.core.container.StorageMethod.TS),
    /** Persistent lists: list heads on disk, updated with the blocks. */
    PL(org.htod.core.container.StorageMethod.PL),
    /** Persistent free lists: free-list heads on disk; allocated blocks dropped from them on recovery. */
    PFL(org.htod.core.container.StorageMethod.PFL);

    final org.htod.core.container.StorageMethod core;

    StorageMethod(org.htod.core.container.StorageMethod core) {
        this.core = core;
    }
}
