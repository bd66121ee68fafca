package org.htod.core.container;

import org.htod.core.CorruptStoreException;

/**
 * How the heap records which blocks are allocated, chosen once when a store is created and kept
 * in its superblock (core paper §2). The code is the byte stored on disk; it never changes for a
 * given method.
 */
public enum StorageMethod {
    /** Tagged size: size and allocation status in each block header; recovery scans the headers. */
    TS(1),
    /** Persistent lists: free-list heads on disk, updated together with the block. */
    PL(2),
    /** Persistent free lists: list heads on disk, allocated blocks fixed at the heads after a crash. */
    PFL(3);

    private final int code;

    StorageMethod(int code) {
        this.code = code;
    }

    /** The byte that stands for this method in the superblock. */
    public int code() {
        return code;
    }

    /**
     * The method stored as {@code code}.
     *
     * @throws CorruptStoreException if no method has that code
     */
    public static StorageMethod fromCode(int code) {
        StorageMethod m = lookup(code);
        if (m == null) {
            throw new CorruptStoreException("unknown storage method code " + code + ": expected "
                    + describeCodes(), -1);
        }
        return m;
    }

    /** The method with this code, or null. */
    static StorageMethod lookup(int code) {
        for (StorageMethod m : values()) {
            if (m.code == code) {
                return m;
            }
        }
        return null;
    }

    /** "1 (TS), 2 (PL) or 3 (PFL)", for error messages. */
    static String describeCodes() {
        StringBuilder sb = new StringBuilder();
        StorageMethod[] all = values();
        for (int i = 0; i < all.length; i++) {
            if (i > 0) {
                sb.append(i == all.length - 1 ? " or " : ", ");
            }
            sb.append(all[i].code).append(" (").append(all[i].name()).append(')');
        }
        return sb.toString();
    }
}
