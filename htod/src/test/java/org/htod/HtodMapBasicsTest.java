package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.htod.core.device.MemoryDevice;
import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(VerifyStores.class)
class HtodMapBasicsTest {

    @Test
    void putGetRemoveAndReopen(OpenedStores stores) {
        MemoryDevice dev = new MemoryDevice();
        try (HtodStore s = stores.open(dev, TestStores::small)) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            assertNull(m.put("a", "1"));
            assertEquals("1", m.put("a", "2"));
            assertEquals("2", m.get("a"));
            assertNull(m.get("b"));
            for (int i = 0; i < 1000; i++) {
                m.put("k" + i, "v" + i);
            }
            assertEquals(1001, m.size());
            assertEquals("2", m.remove("a"));
            assertEquals(1000, m.size());
            TestStores.verify(s);
        }
        try (HtodStore s = stores.open(dev.reopen(), TestStores::small)) {
            assertTrue(s.recoveryReport().clean(), s.recoveryReport().toString());
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            assertEquals(1000, m.size());
            Map<String, String> copy = new HashMap<>(m);
            assertEquals(1000, copy.size());
            for (int i = 0; i < 1000; i++) {
                assertEquals("v" + i, m.get("k" + i));
            }
            assertFalse(m.containsKey("a"));
            TestStores.verify(s);
            m.clear();
            assertTrue(m.isEmpty());
            TestStores.verify(s);
        }
    }

    @Test
    void nullsAreRejected(OpenedStores stores) {
        try (HtodStore s = TestStores.memory(stores)) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            assertThrows(NullPointerException.class, () -> m.put(null, "x"));
            assertThrows(NullPointerException.class, () -> m.put("x", null));
            assertThrows(NullPointerException.class, () -> m.get(null));
        }
    }
}
