package org.htod.core.container;

/** How the heap keeps its allocation state on disk (core paper §2.1-2.3). */
public enum StorageMethod {
    TS, PL, PFL
}
