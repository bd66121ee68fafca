package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A function given to {@code compute} or {@code merge} may read the store and must not change it:
 * each change from inside one is refused with {@link IllegalStateException}, and nothing of it is
 * made, in both modes. In log mode such a function holds its key's lock, which the flusher takes
 * to install the key: a function that wrote another map waited for room in the write buffer (or
 * the log) that only the flusher could make, and so hung for good once either filled (a write of
 * a thousand 1,000-byte values from inside one, with a buffer or a log of 1 MiB, never returned);
 * and a write whose key shared the function's lock was refused while the others went through.
 */
class ComputeFunctionTest {
    @ParameterizedTest(name = "direct mode {0}")
    @ValueSource(booleans = {false, true})
    void aFunctionMayReadTheStoreButNotChangeIt(boolean direct) {
        Path copy = TestStores.tempFile("compute-copy");
        try (HtodStore s = TestStores.small(new MemoryDevice()).directMode(direct).open()) {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            HtodMap<String, String> other = s.map("other", Codec.string(), Codec.string());
            other.put("o", "before");
            m.put("k", "0");
            WriteBatch batch = direct ? null : s.batch().put(other, "b", "batched");

            Map<String, Runnable> changes = new LinkedHashMap<>();
            changes.put("put to another map", () -> other.put("o2", "inside"));
            changes.put("remove from another map", () -> other.remove("o"));
            changes.put("putAll to another map", () -> other.putAll(Map.of("o3", "inside")));
            changes.put("merge into another map", () -> other.merge("o", "x", String::concat));
            changes.put("clear another map", other::clear);
            changes.put("sweep another map", other::sweepExpired);
            changes.put("put another key of its own map", () -> m.put("k2", "inside"));
            changes.put("create a map", () -> s.map("new", Codec.string(), Codec.string()));
            changes.put("sync", s::sync);
            changes.put("checkpoint", s::checkpoint);
            changes.put("verify", s::verify);
            if (!direct) {
                changes.put("commit a batch", batch::commit);
                changes.put("copy the store", () -> s.copyTo(copy, Progress.NONE));
            }
            List<String> messages = new ArrayList<>();
            for (Map.Entry<String, Runnable> c : changes.entrySet()) {
                String got = m.compute("k", (k, v) -> {
                    try {
                        c.getValue().run();
                        return "made";
                    } catch (IllegalStateException refused) {
                        messages.add(refused.getMessage());
                        return String.valueOf(Integer.parseInt(v) + 1);
                    }
                });
                assertTrue(!"made".equals(got), c.getKey() + " from inside a function was made");
            }
            assertEquals(String.valueOf(changes.size()), m.get("k"), "each function's own result, after its refusal");
            assertTrue(messages.stream().allMatch(msg -> msg.startsWith("a function given to compute or merge must not")),
                    "each refusal says why: " + messages);

            // Reads, of another map and of its own map, are what a function may do.
            String read = m.compute("k", (k, v) -> v + ":" + other.get("o") + ":" + other.size() + ":" + m.get("k2"));
            assertEquals(changes.size() + ":before:1:null", read);

            assertEquals(Map.of("o", "before"), Map.copyOf(other), "nothing a refused change would have made");
            assertFalse(s.mapNames().contains("new"), "no map created from inside a function");
            assertFalse(Files.exists(copy), "no copy made from inside a function");

            // After the function returns, the same changes go through.
            other.put("o2", "after");
            m.put("k2", "after");
            if (batch != null) {
                assertEquals(1, batch.commit(), "the batch refused inside, committed after");
                assertEquals("batched", other.get("b"));
            }
            s.sync();
            assertEquals("after", other.get("o2"));
            assertTrue(s.verify().ok(), "the store verifies");
        } finally {
            TestStores.delete(copy);
        }
    }
}
