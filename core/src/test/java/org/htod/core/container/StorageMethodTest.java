package org.htod.core.container;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.htod.core.CorruptStoreException;
import org.junit.jupiter.api.Test;

class StorageMethodTest {
    @Test
    void codesAreTheOnDiskBytes() {
        assertEquals(1, StorageMethod.TS.code());
        assertEquals(2, StorageMethod.PL.code());
        assertEquals(3, StorageMethod.PFL.code());
        for (StorageMethod m : StorageMethod.values()) {
            assertEquals(m, StorageMethod.fromCode(m.code()));
        }
    }

    @Test
    void unknownCodeIsCorrupt() {
        for (int code : new int[] {0, 4, 255, -1}) {
            CorruptStoreException e = assertThrows(CorruptStoreException.class, () -> StorageMethod.fromCode(code));
            assertEquals("unknown storage method code " + code + ": expected 1 (TS), 2 (PL) or 3 (PFL)",
                    e.getMessage());
        }
    }
}
