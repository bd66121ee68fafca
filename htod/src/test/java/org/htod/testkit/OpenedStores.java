package org.htod.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.VerifyReport;
import org.htod.core.HtodException;
import org.htod.core.StoreClosedException;
import org.htod.core.device.MemoryDevice;

/**
 * The stores one test opened, which {@link VerifyStores} checks after the test. A test asks for
 * one as a parameter and opens its stores through it, or hands it a store it opened itself
 * together with what reopens it: the {@link MemoryDevice} holding its bytes, or its file. A store
 * left open is verified as it is and then closed; a closed one is reopened, verified and closed.
 *
 * <p>Track only stores meant to be sound at the end of the test: a store abandoned on purpose in
 * the middle of its work (a simulated crash or kill) is not, and its test verifies the store it
 * reopens instead. Thread-safe: a test's threads may open stores through it.
 */
public final class OpenedStores {
    private final Path dir;
    private final List<Tracked> stores = new ArrayList<>();
    private final List<Path> files = new ArrayList<>();

    /** A store, and where it lives: exactly one of {@code bytes} and {@code file}. */
    private record Tracked(HtodStore store, MemoryDevice bytes, Path file) {}

    OpenedStores(Path dir) {
        this.dir = dir;
    }

    /** Opens a store on {@code device} with the builder {@code options} makes of {@code Htod.builder(device)}. */
    public HtodStore open(MemoryDevice device, UnaryOperator<Htod.Builder> options) {
        return track(options.apply(Htod.builder(device)).open(), device);
    }

    /** Opens a store in {@code file} with the builder {@code options} makes of {@code Htod.builder(file)}. */
    public HtodStore open(Path file, UnaryOperator<Htod.Builder> options) {
        return track(options.apply(Htod.builder(file)).open(), file);
    }

    /** Tracks a store opened on a device over {@code bytes} (a counting or faulty device, say). */
    public synchronized HtodStore track(HtodStore store, MemoryDevice bytes) {
        stores.add(new Tracked(Objects.requireNonNull(store), Objects.requireNonNull(bytes), null));
        return store;
    }

    /** Tracks a store opened in {@code file}. */
    public synchronized HtodStore track(HtodStore store, Path file) {
        stores.add(new Tracked(Objects.requireNonNull(store), null, Objects.requireNonNull(file)));
        return store;
    }

    /**
     * A new, absent file in the test directory ({@code htod.test.dir}, else the system's temporary
     * directory), deleted after the test and its verification: a test must not delete it itself.
     */
    public synchronized Path newFile(String prefix) {
        try {
            Files.createDirectories(dir);
            Path f = Files.createTempFile(dir, prefix, ".htod");
            Files.delete(f);
            files.add(f);
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Verifies every tracked store: first those still open (then closes them, so that no store
     * holds bytes another reopens), then the closed ones, each reopened. Returns what failed, in
     * words; empty when all are sound.
     */
    synchronized List<String> verifyAll() {
        List<String> failures = new ArrayList<>();
        List<Tracked> closed = new ArrayList<>();
        for (int i = 0; i < stores.size(); i++) {
            Tracked t = stores.get(i);
            String which = "store " + (i + 1) + " of " + stores.size() + " (" + t.store() + ")";
            VerifyReport r;
            try {
                r = t.store().verify();
            } catch (StoreClosedException e) {
                closed.add(t);
                continue;
            } catch (HtodException e) {
                failures.add(which + ", open at the end of the test, failed to verify: " + e);
                continue;
            }
            if (!r.ok()) {
                failures.add(which + ", open at the end of the test, does not verify: " + r);
            }
            try {
                t.store().close();
            } catch (HtodException e) {
                failures.add(which + " verified, then failed to close: " + e);
            }
        }
        Set<Path> filesSeen = new LinkedHashSet<>();
        Map<MemoryDevice, Boolean> bytesSeen = new IdentityHashMap<>();
        for (Tracked t : closed) {
            if (t.file() != null ? !filesSeen.add(t.file()) : bytesSeen.put(t.bytes(), true) != null) {
                continue; // one store's bytes, verified once
            }
            String which = "closed store " + (t.file() != null ? t.file() : t.bytes().name());
            try {
                VerifyReport r = t.file() != null ? verifyFile(t.file()) : verifyBytes(t.bytes());
                if (!r.ok()) {
                    failures.add(which + ", reopened after the test, does not verify: " + r);
                }
            } catch (HtodException | IllegalStateException e) {
                failures.add(which + " failed to reopen and verify after the test: " + e);
            }
        }
        return failures;
    }

    private static VerifyReport verifyFile(Path file) {
        if (!Files.exists(file)) {
            throw new IllegalStateException(file + " was deleted before it could be verified; use newFile, which"
                    + " deletes it after");
        }
        return Htod.verify(file);
    }

    private static VerifyReport verifyBytes(MemoryDevice bytes) {
        try (HtodStore s = Htod.builder(bytes.reopen()).createIfMissing(false).open()) {
            return s.verify();
        }
    }

    /** Closes what is still open, quietly (the test has failed already), and deletes the files. */
    synchronized void cleanUp(List<String> problems) {
        for (Tracked t : stores) {
            try {
                t.store().close();
            } catch (HtodException e) {
                problems.add("closing " + t.store() + " after the test: " + e);
            }
        }
        for (Path f : files) {
            try {
                Files.deleteIfExists(f);
            } catch (IOException e) {
                problems.add("deleting " + f + ": " + e);
            }
        }
        stores.clear();
        files.clear();
    }
}
