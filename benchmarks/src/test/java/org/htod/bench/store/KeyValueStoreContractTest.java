package org.htod.bench.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.htod.bench.TestDirs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every adapter through one scenario, checked against a {@code HashMap} model: puts of mixed sizes
 * up to 64 KiB, gets, overwrites, removes, a batch, the three iterations, then close, reopen and
 * check that everything is still there. Runs for each durability the adapter supports.
 */
class KeyValueStoreContractTest {

    private static final long SEED = 0x5EED_4854_4F44L;
    private static final int OBJECTS = 200;
    private static final int MAX_VALUE = 64 * 1024;

    private TestDirs dirs;

    private Path dir;

    static Stream<Arguments> storesAndDurabilities() {
        List<Arguments> out = new ArrayList<>();
        for (String name : Stores.names()) {
            for (Durability d : Durability.values()) {
                if (Stores.supports(name, d)) {
                    out.add(Arguments.of(name, d));
                }
            }
        }
        return out.stream();
    }

    @BeforeEach
    void makeDir() throws IOException {
        dirs = TestDirs.create("contract-");
        dir = dirs.path();
    }

    @AfterEach
    void removeDir() {
        dirs.close();
    }

    @ParameterizedTest(name = "{0} at {1}")
    @MethodSource("storesAndDurabilities")
    void behavesLikeAMap(String name, Durability durability) {
        SplittableRandom rnd = new SplittableRandom(SEED ^ name.hashCode() ^ durability.ordinal());
        Map<String, byte[]> model = new HashMap<>();
        SizingHint hint = new SizingHint(OBJECTS * 2L, 40, 8 * 1024, MAX_VALUE);
        Path storeDir = dir.resolve(name);

        try (KeyValueStore store = Stores.open(name, storeDir, durability, hint)) {
            assertEquals(name, store.name());
            assertEquals(durability, store.durability());
            assertNull(store.get(key(0)), "empty store");
            assertFalse(store.remove(key(0)), "remove from empty store");

            for (int i = 0; i < OBJECTS; i++) {
                byte[] v = value(rnd);
                store.put(key(i), v);
                model.put(keyString(i), v);
            }
            // A binary key, which file-per-object must place in its hashed tree.
            byte[] binary = {0, 1, 2, (byte) 0xff, '/', '.', '.'};
            byte[] binaryValue = value(rnd);
            store.put(binary, binaryValue);
            assertArrayEquals(binaryValue, store.get(binary));
            assertTrue(store.remove(binary));
            assertNull(store.get(binary));

            checkGets(store, model, "after puts");

            // Overwrite a third with new sizes, including empty values.
            for (int i = 0; i < OBJECTS; i += 3) {
                byte[] v = i % 30 == 0 ? new byte[0] : value(rnd);
                store.put(key(i), v);
                model.put(keyString(i), v);
            }
            // Remove a fifth.
            for (int i = 1; i < OBJECTS; i += 5) {
                assertTrue(store.remove(key(i)), "remove " + keyString(i));
                assertFalse(store.remove(key(i)), "second remove " + keyString(i));
                model.remove(keyString(i));
            }
            // A batch of new keys.
            List<byte[]> keys = new ArrayList<>();
            List<byte[]> values = new ArrayList<>();
            for (int i = OBJECTS; i < OBJECTS + 5; i++) {
                keys.add(key(i));
                byte[] v = value(rnd);
                values.add(v);
                model.put(keyString(i), v);
            }
            store.putBatch(keys, values);
            assertNull(store.get(key(OBJECTS + 100)), "absent key");

            checkGets(store, model, "after overwrites and removes");
            checkIterations(store, model, "before close");
            store.flush();
            assertTrue(store.diskBytes() > 0, "diskBytes after flush");
        }

        try (KeyValueStore reopened = Stores.open(name, storeDir, durability, hint)) {
            checkGets(reopened, model, "after reopen");
            checkIterations(reopened, model, "after reopen");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("unsupported")
    void refusesDurabilityItCannotGive(String name, Durability durability) {
        assertThrows(UnsupportedOperationException.class,
                () -> Stores.open(name, dir.resolve(name), durability, new SizingHint(10, 10, 10, 10)));
    }

    static Stream<Arguments> unsupported() {
        List<Arguments> out = new ArrayList<>();
        for (String name : Stores.names()) {
            for (Durability d : Durability.values()) {
                if (!Stores.supports(name, d)) {
                    out.add(Arguments.of(name, d));
                }
            }
        }
        return out.stream();
    }

    private static void checkGets(KeyValueStore store, Map<String, byte[]> model, String when) {
        for (int i = 0; i < OBJECTS + 5; i++) {
            byte[] expected = model.get(keyString(i));
            byte[] actual = store.get(key(i));
            if (expected == null) {
                assertNull(actual, when + ": " + keyString(i) + " should be absent");
            } else {
                assertArrayEquals(expected, actual, when + ": value of " + keyString(i));
            }
        }
    }

    private static void checkIterations(KeyValueStore store, Map<String, byte[]> model, String when) {
        List<String> seenKeys = new ArrayList<>();
        store.forEachKey(k -> seenKeys.add(new String(k, StandardCharsets.UTF_8)));
        assertEquals(model.size(), seenKeys.size(), when + ": Ik count");
        assertEquals(model.keySet(), new java.util.HashSet<>(seenKeys), when + ": Ik keys");

        Map<ByteBuffer, Integer> expectedValues = new HashMap<>();
        for (byte[] v : model.values()) {
            expectedValues.merge(ByteBuffer.wrap(v), 1, Integer::sum);
        }
        Map<ByteBuffer, Integer> seenValues = new HashMap<>();
        store.forEachValue(v -> seenValues.merge(ByteBuffer.wrap(v), 1, Integer::sum));
        assertEquals(expectedValues, seenValues, when + ": Iv values");

        Map<String, byte[]> seenEntries = new HashMap<>();
        store.forEachEntry((k, v) -> {
            if (seenEntries.put(new String(k, StandardCharsets.UTF_8), v) != null) {
                fail(when + ": Ie visited " + new String(k, StandardCharsets.UTF_8) + " twice");
            }
        });
        assertEquals(model.keySet(), seenEntries.keySet(), when + ": Ie keys");
        for (Map.Entry<String, byte[]> e : model.entrySet()) {
            assertArrayEquals(e.getValue(), seenEntries.get(e.getKey()), when + ": Ie value of " + e.getKey());
        }
    }

    /** URL-like keys spread over a few directories, as a publishing site names its objects. */
    private static String keyString(int i) {
        return "/contract/section" + (i % 7) + "/page-" + i + ".html";
    }

    private static byte[] key(int i) {
        return keyString(i).getBytes(StandardCharsets.UTF_8);
    }

    /** Mostly small values, some up to 64 KiB. */
    private static byte[] value(SplittableRandom rnd) {
        int size = rnd.nextInt(10) == 0 ? rnd.nextInt(MAX_VALUE + 1) : rnd.nextInt(4096);
        byte[] v = new byte[size];
        rnd.nextBytes(v);
        return v;
    }
}
