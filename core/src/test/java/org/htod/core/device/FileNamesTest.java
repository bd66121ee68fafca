package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The temporary names of files being written: the copies of a store and the tool's exports and
 * imports make them with {@link FileNames#temporary}, and a store's open deletes those its name
 * owns ({@link FileNames#isTemporary}); the two must agree, or a killed copy's file stays for ever.
 */
class FileNamesTest {
    @Test
    void aTemporaryNameIsBesideItsTargetAndKnownAsItsOwn() {
        Path target = Path.of("data", "s.htod");
        Path tmp = FileNames.temporary(target);
        assertEquals(target.toAbsolutePath().getParent(), tmp.getParent());
        assertTrue(tmp.getFileName().toString().startsWith("s.htod.partial-"), tmp.toString());
        assertTrue(FileNames.isTemporary(target, tmp), tmp.toString());
        assertNotEquals(tmp, FileNames.temporary(target), "fresh each time");
        assertFalse(FileNames.isTemporary(Path.of("data", "t.htod"), tmp), "another store's");
        assertFalse(FileNames.isTemporary(Path.of("data", "s"), tmp), "a store whose name begins the same");
        assertFalse(FileNames.isTemporary(target, Path.of("data", "s.htod.partial-notes")), "not a hexadecimal tail");
        assertFalse(FileNames.isTemporary(target, Path.of("data", "s.htod.partial-")), "no tail");
        assertFalse(FileNames.isTemporary(target, target), "the store itself");
    }
}
