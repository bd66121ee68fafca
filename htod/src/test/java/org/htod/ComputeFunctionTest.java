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
    private static final String REFUSAL = "a function given to compute or merge, or a codec run during a change, must not";

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
            assertTrue(messages.stream().allMatch(msg -> msg.startsWith(REFUSAL)), "each refusal says why: " + messages);

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

    /**
     * A codec that writes the store (here, a value codec that notes each value it encodes in
     * another map) is refused as a compute function is while it runs inside a change, holding
     * the key's lock: when a compute's new value is encoded, or the stored value decoded for its
     * function. Outside a change (a put encodes its value before it takes the lock)
     * it may write.
     */
    @ParameterizedTest(name = "direct mode {0}")
    @ValueSource(booleans = {false, true})
    void aCodecRunInsideAChangeMayNotChangeTheStore(boolean direct) {
        try (HtodStore s = TestStores.small(new MemoryDevice()).directMode(direct).open()) {
            HtodMap<String, String> noted = s.map("noted", Codec.string(), Codec.string());
            Codec<String> noting = new Codec<>() {
                @Override
                public byte[] encode(String value) {
                    noted.put(value, "encoded");
                    return Codec.string().encode(value);
                }

                @Override
                public String decode(byte[] bytes) {
                    String v = Codec.string().decode(bytes);
                    noted.put(v, "decoded");
                    return v;
                }
            };
            HtodMap<String, String> m = s.map("m", Codec.string(), noting);
            m.put("k", "a"); // encoded before the change: the codec's write goes through
            assertEquals("encoded", noted.get("a"));

            IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    () -> m.compute("k", (k, v) -> "b"));
            assertTrue(e.getMessage().startsWith(REFUSAL), e.getMessage());
            e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    () -> m.computeIfAbsent("k2", k -> "b")); // nothing to decode: the new value's encoding writes
            assertTrue(e.getMessage().startsWith(REFUSAL), e.getMessage());
            assertFalse(m.containsKey("k2"));
            assertEquals(Map.of("a", "encoded"), Map.copyOf(noted), "nothing the refused codec would have written");
            assertEquals("a", Codec.string().decode(s.map("m", Codec.string(), Codec.bytes()).get("k")), "k unchanged");
            assertTrue(s.verify().ok(), "the store verifies");
        }
    }
}
