package org.htod.infinispan;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import org.htod.Htod;
import org.htod.core.HtodIOException;
import org.htod.core.StoreFullException;
import org.htod.core.StoreLockedException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.FaultyDevice;
import org.htod.core.device.FileDevice;
import org.htod.core.device.ForwardingDevice;
import org.infinispan.commons.CacheConfigurationException;
import org.infinispan.commons.test.CommonsTestingUtil;
import org.infinispan.commons.util.Util;
import org.infinispan.configuration.cache.Configuration;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.persistence.BaseNonBlockingStoreTest;
import org.infinispan.persistence.spi.NonBlockingStore;
import org.infinispan.persistence.spi.PersistenceException;
import org.infinispan.persistence.support.EnsureNonBlockingStore;
import org.infinispan.test.fwk.TestCacheManagerFactory;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Factory;
import org.testng.annotations.Test;

/**
 * Infinispan's own unit kit for stores, every call wrapped by its EnsureNonBlockingStore so that
 * BlockHound fails the test if a store method blocks its caller: loads, writes, deletes, batches,
 * expiry by lifespan and max idle with a controlled clock, purge, restart, sizes, segment removal.
 * Run segmented (a map per segment) and non-segmented (one map) in log mode, the default, and
 * segmented in direct mode, whose batches and clears take the paths without WriteBatch.
 *
 * <p>Beyond the kit, failures of the device under a store started on the same file: a close that
 * fails leaves the store to a later stop, which closes it; a start that fails reports its own
 * cause though the close after it fails too; htod's errors reach the caller as {@link
 * PersistenceException}s. stop used to forget the store before closing it, so a failed close left
 * the file locked until the JVM exited; start's cleanup close replaced the cause of the failure
 * with its own; and stop and purge let htod's exceptions through as they were.
 */
@Test(groups = "unit", testName = "persistence.htod.HtodNonBlockingStoreTest")
public class HtodNonBlockingStoreTest extends BaseNonBlockingStoreTest {
    private final boolean segmented;
    private final boolean direct;

    public HtodNonBlockingStoreTest(boolean segmented, boolean direct) {
        this.segmented = segmented;
        this.direct = direct;
    }

    @Factory
    public static Object[] factory() {
        return new Object[] {new HtodNonBlockingStoreTest(true, false), new HtodNonBlockingStoreTest(false, false),
                new HtodNonBlockingStoreTest(true, true)};
    }

    @Override
    protected String parameters() {
        return "[segmented=" + segmented + (direct ? ", direct mode" : "") + "]";
    }

    @AfterClass(alwaysRun = true)
    protected void removeStoreFiles() {
        Util.recursiveFileRemove(CommonsTestingUtil.tmpDirectory(getClass()));
    }

    /** Beyond the kit: a key over htod's limit is refused with a typed error, and the store goes on. */
    public void testKeyOverHtodsLimitIsRefused() {
        String key = "k".repeat(Htod.MAX_KEY_BYTES + 1);
        RuntimeException thrown = expectThrows(RuntimeException.class,
                () -> store.write(marshalledEntry(internalCacheEntry(key, "v", -1))));
        Throwable e = thrown;
        while (!(e instanceof PersistenceException) && e.getCause() != null) {
            e = e.getCause(); // the stage failed: the join wraps its cause
        }
        assertTrue(e instanceof PersistenceException && e.getMessage().contains("takes keys of at most "
                + Htod.MAX_KEY_BYTES + " bytes"), String.valueOf(thrown));
        store.write(marshalledEntry(internalCacheEntry("small", "v", -1)));
        assertTrue(store.contains("small"));
    }

    /** Log mode unless direct mode is asked for. */
    public void testModeIsTheOneConfigured() {
        assertEquals(((HtodNonBlockingStore<?, ?>) store.delegate()).logged(), !direct);
    }

    /**
     * A close that fails (the disk full at the store's last install or checkpoint) fails stop with
     * a PersistenceException; a stop once the disk has room again closes the store, and the store
     * starts again on the same file with what it held. stop used to drop its maps before closing:
     * htod's StoreFullException came through as it was, the second stop did nothing, and in log
     * mode the store stayed open, its file locked, so the restart failed with StoreLockedException.
     */
    public void testStopClosesTheStoreAfterAFailedClose() {
        store.write(marshalledEntry(internalCacheEntry("before", "v", -1)));
        onFaultyDevice(failing -> {
            failing.write(marshalledEntry(internalCacheEntry("k", "v", -1)));
            faulty.failWrite(1, FaultyDevice.Fault.DISK_FULL, true);
            faulty.failSync(1, FaultyDevice.Fault.DISK_FULL, true);
            Throwable e = thrown(failing::stopAndWait);
            assertTrue(e instanceof PersistenceException && e.getCause() instanceof StoreFullException,
                    "a failed close fails stop with a PersistenceException: " + e);
            faulty.heal();
            failing.stopAndWait();
            try {
                FileDevice.open(faultyFile).close();
            } catch (StoreLockedException locked) {
                throw new AssertionError("the second stop closed the store, letting go of its file: " + locked, locked);
            }
        });
        assertTrue(store.contains("before") && store.contains("k"), "the store starts again on its file, whole");
    }

    /**
     * A purge whose removal meets a full disk fails with a PersistenceException, as a delete does;
     * it failed with htod's StoreFullException.
     */
    public void testAFailedPurgeIsAPersistenceException() {
        onFaultyDevice(failing -> {
            failing.write(marshalledEntry(internalCacheEntry("short", "v", 10)));
            timeService.advance(1000);
            faulty.failWrite(1, FaultyDevice.Fault.DISK_FULL, true);
            faulty.failSync(1, FaultyDevice.Fault.DISK_FULL, true);
            Throwable e = thrown(failing::purge);
            assertTrue(e instanceof PersistenceException && e.getCause() instanceof StoreFullException,
                    "a failed purge is a PersistenceException: " + e);
        });
    }

    /**
     * A sync fails and the device refuses every sync since, as a file does: the writes after it
     * fail, and once htod has latched the failure (in direct mode at once, in log mode when the
     * next write's heal of the log is refused) the store is not available, so that Infinispan
     * marks it unavailable. A write that failed once on a full disk, which htod gets over, leaves
     * it available. isAvailable asked only whether the file existed, and said true.
     */
    public void testNotAvailableOnceHtodLatchedADeviceFailure() {
        onFaultyDevice(failing -> {
            failing.write(marshalledEntry(internalCacheEntry("before", "v", -1)));
            faulty.failWrite(1, FaultyDevice.Fault.DISK_FULL, false);
            mayFail(() -> failing.write(marshalledEntry(internalCacheEntry("full", "v", -1))));
            assertTrue(join(failing.isAvailable()), "available after a write that met a full disk once");
            faulty.failSyncLatching(1);
            Throwable first = thrown(() -> failing.write(marshalledEntry(internalCacheEntry("k1", "v", -1))));
            Throwable second = thrown(() -> failing.write(marshalledEntry(internalCacheEntry("k2", "v", -1))));
            assertTrue(first instanceof PersistenceException && second instanceof PersistenceException,
                    "writes after the failed sync fail: " + first + ", " + second);
            assertEquals(join(failing.isAvailable()), Boolean.FALSE, "unavailable once htod latched the failure: "
                    + failing.delegate());
            assertTrue(failing.delegate().toString().contains("failed: "), "says why: " + failing.delegate());
            assertTrue(failing.contains("before"), "reads go on");
            // The close cannot sync, and says so; the store is closed all the same (the next stop returns).
            mayFail(failing::stopAndWait);
        });
    }

    private static <T> T join(java.util.concurrent.CompletionStage<T> stage) {
        return stage.toCompletableFuture().join();
    }

    /** Runs {@code call}, which may fail: its outcome is not what the test checks. */
    private static void mayFail(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            // either way
        }
    }

    /**
     * A start that fails (the file was written with the other segment layout) reports its own
     * cause, with the failure of the close after it suppressed. start used to close unguarded, so
     * the close's I/O error replaced the layout mismatch.
     */
    public void testAFailedStartReportsItsCauseNotTheFailedCloseAfterIt() {
        ConfigurationBuilder other = TestCacheManagerFactory.getDefaultCacheConfiguration(false);
        other.clustering().hash().numSegments(segmentCount);
        Configuration otherLayout = config(other, !segmented);
        store.stopAndWait();
        try {
            EnsureNonBlockingStore<Object, Object> failing = new EnsureNonBlockingStore<>(
                    new HtodNonBlockingStore<>(path -> Htod.builder(new FailingClose(FileDevice.open(path)))),
                    keyPartitioner);
            Throwable e = thrown(() -> failing.startAndWait(createContext(otherLayout)));
            assertTrue(e instanceof CacheConfigurationException && e.getMessage().contains("the cache now asks for"),
                    "the start fails with the layout mismatch: " + e);
            assertTrue(e.getSuppressed().length == 1 && e.getSuppressed()[0] instanceof HtodIOException,
                    "the close's failure is suppressed: " + Arrays.toString(e.getSuppressed()));
        } finally {
            store.startAndWait(createContext(configuration));
        }
    }

    /** The device under the store {@link #onFaultyDevice} runs on, and its file. */
    private FaultyDevice faulty;
    private Path faultyFile;

    /**
     * Runs {@code test} with a store started on the kit's file over a {@link FaultyDevice}, the kit's
     * store stopped meanwhile; then stops it, heals the device and restarts the kit's store, so that
     * a failed test leaves the file to the next.
     */
    private void onFaultyDevice(Consumer<EnsureNonBlockingStore<Object, Object>> test) {
        store.stopAndWait();
        EnsureNonBlockingStore<Object, Object> failing = new EnsureNonBlockingStore<>(
                new HtodNonBlockingStore<>(path -> {
                    faultyFile = path;
                    return Htod.builder(faulty = new FaultyDevice(FileDevice.open(path)));
                }), keyPartitioner);
        Throwable failed = null;
        try {
            failing.startAndWait(createContext(configuration));
            test.accept(failing);
        } catch (RuntimeException | Error e) {
            failed = e;
            throw e;
        } finally {
            // A cleanup that fails after the test did goes with the test's failure, not in its place.
            try {
                if (faulty != null) {
                    faulty.heal();
                }
                failing.stopAndWait();
                store.startAndWait(createContext(configuration));
            } catch (RuntimeException e) {
                if (failed == null) {
                    throw e;
                }
                failed.addSuppressed(e);
            } finally {
                faulty = null;
            }
        }
    }

    /** What {@code call} failed with, out of the CompletionExceptions of the kit's joins. */
    private static Throwable thrown(Runnable call) {
        Throwable e = expectThrows(RuntimeException.class, call::run);
        while (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /** A device whose close lets go of the file, then fails, as a close that reports an I/O error does. */
    private static final class FailingClose extends ForwardingDevice {
        FailingClose(BlockDevice inner) {
            super(inner);
        }

        @Override
        public void close() {
            super.close();
            throw new HtodIOException("close of " + name(), new IOException("injected I/O error"));
        }
    }

    @Override
    protected NonBlockingStore<Object, Object> createStore() {
        return new HtodNonBlockingStore<>();
    }

    @Override
    protected Configuration buildConfig(ConfigurationBuilder builder) {
        return config(builder, segmented);
    }

    /** The variant's store, with the layout {@code segmented} asks for. */
    private Configuration config(ConfigurationBuilder builder, boolean segmented) {
        // Each variant in a directory of its own under the kit's global persistent location,
        // whatever layout is asked for: a start with the other layout meets the variant's file.
        return builder.persistence()
                .addStore(HtodStoreConfigurationBuilder.class)
                .location((this.segmented ? "segmented" : "single") + (direct ? "-direct" : ""))
                .segmented(segmented)
                .directMode(direct)
                .build();
    }
}
