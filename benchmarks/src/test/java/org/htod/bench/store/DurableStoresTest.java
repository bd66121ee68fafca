package org.htod.bench.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.htod.bench.TestDirs;
import org.htod.core.container.ContainerConfig;
import org.htod.core.device.FileDevice;
import org.htod.core.log.LogReader;
import org.htod.core.log.Records;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The durable-put stores take puts from many threads at once: each thread's own keys hold its last
 * value, a key every thread writes holds one of their values, and all of it is there after close
 * and reopen.
 */
class DurableStoresTest {

    private static final int THREADS = 4;
    private static final int PUTS = 40;
    private static final int KEYS = 10;

    private TestDirs dirs;

    private Path dir;

    static List<String> names() {
        return DurableStores.NAMES;
    }

    @BeforeEach
    void makeDir() throws IOException {
        dirs = TestDirs.create("durable-");
        dir = dirs.path();
    }

    @AfterEach
    void removeDir() {
        dirs.close();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("names")
    void concurrentPutsAllLand(String name) throws Exception {
        byte[] shared = "/shared/key".getBytes(StandardCharsets.UTF_8);
        try (KeyValueStore kv = DurableStores.open(name, dir)) {
            assertEquals(name, kv.name());
            assertEquals(Durability.SYNC, kv.durability());
            inThreads((thread, i) -> {
                kv.put(key(thread, i % KEYS), value(thread, i));
                kv.put(shared, value(thread, i));
            });
            check(kv, shared);
            String io = DurableStores.ioSummary(kv, 2L * THREADS * PUTS);
            if (name.startsWith("htod")) {
                assertNotNull(io, "htod counts its device's I/O");
                assertTrue(io.contains("syncs="), io);
            } else {
                assertNull(io);
            }
        }
        try (KeyValueStore kv = DurableStores.open(name, dir)) {
            check(kv, shared);
        }
    }

    private static void check(KeyValueStore kv, byte[] shared) {
        for (int t = 0; t < THREADS; t++) {
            for (int k = 0; k < KEYS; k++) {
                int last = PUTS - KEYS + k;
                assertArrayEquals(value(t, last), kv.get(key(t, k)), "thread " + t + " key " + k);
            }
        }
        String s = new String(kv.get(shared), StandardCharsets.UTF_8);
        assertTrue(s.endsWith("-" + (PUTS - 1)), "the shared key holds a thread's last value, found " + s);
    }

    /** Runs {@code put} for i = 0 .. PUTS - 1 in each of THREADS threads at once; fails if one fails. */
    private static void inThreads(java.util.function.ObjIntConsumer<Integer> put) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < PUTS; i++) {
                        put.accept(thread, i);
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(2, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static byte[] key(int thread, int k) {
        return ("/t" + thread + "/k" + k).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] value(int thread, int i) {
        return ("value-" + thread + "-" + i).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The disk's reference writes from several threads: each put one 4 KiB block of the file,
     * holding the value, no block written twice until the file's 16,384 blocks are used up.
     */
    @Test
    void theDiskReferenceWritesOneBlockAPut() throws Exception {
        int puts = THREADS * PUTS;
        try (KeyValueStore kv = DurableStores.open(DurableStores.DISK, dir)) {
            assertEquals(DurableStores.DISK, kv.name());
            inThreads((thread, i) -> kv.put(key(thread, i), value(thread, i)));
            assertThrows(UnsupportedOperationException.class, () -> kv.get(key(0, 0)));
        }
        byte[] file = Files.readAllBytes(dir.resolve("dsync.blocks"));
        assertEquals(4096 * 16384, file.length);
        Set<String> found = new HashSet<>();
        for (int b = 0; b < puts; b++) {
            String head = new String(file, b * 4096, 32, StandardCharsets.UTF_8).replace("\0", "");
            assertTrue(head.startsWith("value-"), "block " + b + " holds no value: " + head);
            assertTrue(found.add(head), "block " + b + " repeats " + head);
        }
        assertEquals(0, file[puts * 4096], "the block after the last put is untouched");
    }

    /**
     * The log probe from several threads: every put is one record of the log holding its key and
     * value in a put's data-record layout, all of them durable when the puts return (read back
     * after close from the region, as recovery reads it), and the group commits carried them all.
     */
    @Test
    void theLogAloneLogsOneRecordAPut() throws Exception {
        int puts = THREADS * PUTS;
        String io;
        try (KeyValueStore kv = DurableStores.open(DurableStores.LOG_ALONE, dir)) {
            assertEquals(DurableStores.LOG_ALONE, kv.name());
            inThreads((thread, i) -> kv.put(key(thread, i), value(thread, i)));
            assertThrows(UnsupportedOperationException.class, () -> kv.get(key(0, 0)));
            io = DurableStores.ioSummary(kv, puts);
        }
        assertTrue(io.contains("groupRecords=" + puts + " ") || io.endsWith("groupRecords=" + puts), io);
        Set<String> found = new HashSet<>();
        try (FileDevice dev = FileDevice.open(dir.resolve("log.region"))) {
            LogReader reader = new LogReader(dev, LogAloneStore.REGION_OFFSET, ContainerConfig.DEFAULT_LOG_SIZE, 0, 1);
            for (Records.Record r = reader.next(); r != null; r = reader.next()) {
                ByteBuffer p = r.payload();
                assertEquals(1, p.getInt(), "one operation");
                assertEquals(1, p.get(), "a put");
                p.getLong();
                byte[] key = new byte[p.getInt()];
                p.get(key);
                p.getLong();
                p.getLong();
                byte[] value = new byte[p.getInt()];
                p.get(value);
                assertEquals(0, p.remaining(), "nothing after the value");
                String k = new String(key, StandardCharsets.UTF_8);
                String v = new String(value, StandardCharsets.UTF_8);
                assertTrue(found.add(k), "one record for " + k);
                assertEquals(k.replaceFirst("^/t(\\d+)/k(\\d+)$", "value-$1-$2"), v);
            }
        }
        assertEquals(puts, found.size(), "every put's record is in the log");
    }
}
