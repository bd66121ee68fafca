package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A salvage's scan of the heap may meet a key twice (an older copy whose block was not reused):
 * the key keeps its higher version, whichever copy comes first. An entry of version 1 met after a
 * newer one went into a batch whose blind write then replaced the newer value.
 */
class StoreCopierTest {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aKeyMetTwiceKeepsItsHigherVersionInEitherOrder() {
        try (HtodStore out = TestStores.small(new MemoryDevice()).open()) {
            StoreCopier copier = new StoreCopier(out, 0, true);
            copier.add("m", b("newer-first"), b("new"), 0, 3);
            copier.add("m", b("newer-first"), b("old"), 0, 1);
            copier.add("m", b("older-first"), b("old"), 0, 1);
            copier.add("m", b("older-first"), b("new"), 0, 3);
            copier.finish();
            HtodMap<String, String> m = out.map("m", Codec.string(), Codec.string());
            assertEquals("new", m.get("newer-first"));
            assertEquals(3, m.version("newer-first"));
            assertEquals("new", m.get("older-first"));
            assertEquals(3, m.version("older-first"));
        }
    }
}
