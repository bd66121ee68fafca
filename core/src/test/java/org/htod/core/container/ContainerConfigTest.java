package org.htod.core.container;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class ContainerConfigTest {
    @Test
    void defaultsFollowThePaper() {
        ContainerConfig c = ContainerConfig.defaults();
        assertEquals(StorageMethod.TS, c.storageMethod());
        assertEquals(512, c.grain());
        assertEquals(75, c.maxQuickList());
        assertEquals(2000, c.acceptableWaste());
        assertEquals(8192, c.obaThreshold());
        assertEquals(64L << 20, c.logSize());
        assertFalse(c.heapCapacity().isPresent());
        assertEquals(c, ContainerConfig.builder().build());
    }

    @Test
    void builderKeepsEveryValue() {
        ContainerConfig c = ContainerConfig.builder().storageMethod(StorageMethod.PFL).grain(128).maxQuickList(1)
                .acceptableWaste(0).obaThreshold(0).logSize(0).heapCapacity(128).build();
        assertEquals(StorageMethod.PFL, c.storageMethod());
        assertEquals(128, c.grain());
        assertEquals(1, c.maxQuickList());
        assertEquals(0, c.acceptableWaste());
        assertEquals(0, c.obaThreshold());
        assertEquals(0, c.logSize());
        assertEquals(128, c.heapCapacity().getAsLong());
        assertEquals(c, c.toBuilder().build());
        assertEquals(c.hashCode(), c.toBuilder().build().hashCode());
        assertTrue(c.toString().contains("PFL"), c.toString());
    }

    @Test
    void badValuesAreRejectedWithTheirName() {
        ContainerConfig.Builder b = ContainerConfig.builder();
        assertRejected("grain", () -> b.grain(0));
        assertRejected("grain", () -> b.grain(100));
        assertRejected("grain", () -> b.grain(-64));
        assertRejected("maxQuickList", () -> b.maxQuickList(0));
        assertRejected("maxQuickList", () -> b.maxQuickList(Limits.MAX_QUICK_LISTS + 1));
        assertRejected("acceptableWaste", () -> b.acceptableWaste(-1));
        assertRejected("obaThreshold", () -> b.obaThreshold(-1));
        assertRejected("logSize", () -> b.logSize(-4096));
        assertRejected("logSize", () -> b.logSize(1000));
        assertRejected("heapCapacity", () -> b.heapCapacity(0));
        assertRejected("heapCapacity", () -> ContainerConfig.builder().heapCapacity(100).build());
        assertRejected("heapCapacity", () -> ContainerConfig.builder().heapCapacity(Long.MAX_VALUE).build());
        assertThrows(NullPointerException.class, () -> b.storageMethod(null));
        assertEquals(ContainerConfig.defaults(), b.build(), "a rejected value leaves the builder unchanged");
    }

    private static void assertRejected(String name, Executable e) {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e, name);
        assertTrue(x.getMessage().startsWith(name + " must be"), x.getMessage());
        assertTrue(x.getMessage().contains("found"), x.getMessage());
    }
}
