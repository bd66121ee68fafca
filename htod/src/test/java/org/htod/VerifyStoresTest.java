package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.htod.core.StoreClosedException;
import org.htod.core.device.MemoryDevice;
import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The store verification extension, run on small test classes of its own through the JUnit
 * launcher: it passes sound stores, open or closed, in memory or in files; it fails a test whose
 * store does not verify, with the verifier's report; it closes what a test left open and deletes
 * the files it handed out; it stays quiet about a test that failed by itself.
 */
class VerifyStoresTest {
    private static final String MARK = "a value to damage, long enough to find";

    /** What a subject test leaves behind, for the checks after it ran. */
    static volatile HtodStore leftOpen;
    static volatile Path file;

    /** Runs the tests of {@code subject}; returns the failure of each, null where it passed. */
    private static List<Throwable> run(Class<?> subject) {
        List<Throwable> results = new ArrayList<>();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(subject)).build(),
                new TestExecutionListener() {
                    @Override
                    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                        if (id.isTest()) {
                            results.add(result.getThrowable().orElse(null));
                        }
                    }
                });
        return results;
    }

    /** Flips a byte of the one stored copy of {@link #MARK} in {@code closed}'s bytes, under the entry's checksum. */
    private static void damage(MemoryDevice closed) {
        MemoryDevice dev = closed.reopen();
        byte[] all = new byte[(int) dev.size()];
        dev.read(0, ByteBuffer.wrap(all));
        String text = new String(all, StandardCharsets.ISO_8859_1);
        int at = text.indexOf(MARK);
        assertTrue(at >= 0 && text.indexOf(MARK, at + 1) < 0, "one copy of the value on the device");
        dev.write(at + 5, ByteBuffer.wrap(new byte[] {(byte) (all[at + 5] ^ 0x20)}));
    }

    @ExtendWith(VerifyStores.class)
    static class SoundStores {
        @Test
        void leavesOneOpenAndClosesAnother(OpenedStores stores) {
            MemoryDevice dev = new MemoryDevice();
            try (HtodStore s = stores.open(dev, TestStores::small)) {
                s.map("m", Codec.string(), Codec.string()).put("k", MARK);
            }
            leftOpen = stores.open(dev.reopen(), TestStores::small);
            leftOpen.map("m", Codec.string(), Codec.string()).put("k2", "v2");
        }

        @Test
        void usesAFile(OpenedStores stores) {
            file = stores.newFile("kit");
            try (HtodStore s = stores.open(file, b -> b.grain(64).logSize(1 << 20))) {
                s.map("m", Codec.string(), Codec.string()).put("k", "v");
            }
        }
    }

    @Test
    void soundStoresPassAndAreClosedAndTheirFilesDeleted() {
        List<Throwable> r = run(SoundStores.class);
        assertEquals(2, r.size());
        assertEquals(null, r.get(0), "a sound store passes");
        assertEquals(null, r.get(1), "a sound store passes");
        assertThrows(StoreClosedException.class, () -> leftOpen.mapNames(), "the store left open was closed");
        assertNotNull(file);
        assertFalse(Files.exists(file), "the file handed out was deleted");
    }

    @ExtendWith(VerifyStores.class)
    static class DamagedStore {
        @Test
        void damagesItsStoreAfterClosingIt(OpenedStores stores) {
            MemoryDevice dev = new MemoryDevice();
            try (HtodStore s = stores.open(dev, TestStores::small)) {
                s.map("m", Codec.string(), Codec.string()).put("k", MARK);
            }
            damage(dev);
        }
    }

    @Test
    void aStoreThatDoesNotVerifyFailsItsTestWithTheReport() {
        List<Throwable> r = run(DamagedStore.class);
        assertEquals(1, r.size());
        Throwable e = r.get(0);
        assertTrue(e instanceof AssertionError, String.valueOf(e));
        assertTrue(e.getMessage().contains("does not verify") && e.getMessage().contains("problem"), e.getMessage());
    }

    @ExtendWith(VerifyStores.class)
    static class DeletedFile {
        @Test
        void deletesTheFileOfItsStore(OpenedStores stores) throws Exception {
            Path f = Files.createTempFile(Path.of(System.getProperty("htod.test.dir",
                    System.getProperty("java.io.tmpdir"))), "deleted", ".htod");
            Files.delete(f);
            stores.open(f, b -> b.grain(64).logSize(1 << 20)).close();
            Files.delete(f);
        }
    }

    @Test
    void aStoreDeletedBeforeItCouldBeVerifiedFailsItsTest() {
        List<Throwable> r = run(DeletedFile.class);
        assertEquals(1, r.size());
        assertNotNull(r.get(0));
        assertTrue(r.get(0).getMessage().contains("deleted before it could be verified"), r.get(0).getMessage());
    }

    @ExtendWith(VerifyStores.class)
    static class FailingTest {
        @Test
        void failsByItselfWithADamagedStore(OpenedStores stores) {
            MemoryDevice dev = new MemoryDevice();
            try (HtodStore s = stores.open(dev, TestStores::small)) {
                s.map("m", Codec.string(), Codec.string()).put("k", MARK);
            }
            damage(dev);
            leftOpen = stores.open(new MemoryDevice(), TestStores::small);
            throw new IllegalStateException("the test's own failure");
        }
    }

    @Test
    void aTestThatFailsReportsItsOwnFailureAndStillClosesItsStores() {
        List<Throwable> r = run(FailingTest.class);
        assertEquals(1, r.size());
        assertTrue(r.get(0) instanceof IllegalStateException, String.valueOf(r.get(0)));
        assertEquals(0, r.get(0).getSuppressed().length, "not verified, nothing to add");
        assertThrows(StoreClosedException.class, () -> leftOpen.mapNames());
    }
}
