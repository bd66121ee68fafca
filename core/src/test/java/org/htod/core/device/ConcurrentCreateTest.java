package org.htod.core.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.htod.core.StoreLockedException;
import org.junit.jupiter.api.Test;

/**
 * Two threads of one process open the same file, which neither finds there: one opens it, the
 * other is refused, and the file stays locked against other processes. Each open's first
 * channel, the one that creates the file, waits here for the other's (for a while), so that both
 * would create it at once if they could. Both used to: a new file has no identity to claim before
 * it exists, so both opened a descriptor, one claimed the file and locked it, and the other,
 * refused, closed its descriptor, which dropped the winner's lock (closing any descriptor of a
 * file drops the process's POSIX locks on it).
 */
class ConcurrentCreateTest {
    @Test
    void twoOpensCreatingOneFileLeaveItLockedByTheOneThatWins() throws Exception {
        Path file = DeviceContractTests.testDir().resolve("concurrent-create-" + System.nanoTime() + ".htod");
        CyclicBarrier bothCreating = new CyclicBarrier(2);
        LockedChannel.Opener opener = (path, options) -> {
            FileChannel ch = FileChannel.open(path, options);
            if (options.contains(StandardOpenOption.CREATE)) {
                try {
                    bothCreating.await(500, TimeUnit.MILLISECONDS);
                } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
                    // the other open waits for this one's claim: it creates nothing beside it
                }
            }
            return ch;
        };
        List<Object> outcomes = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            threads.add(new Thread(() -> {
                Object o;
                try {
                    o = FileDevice.open(file, 1L << 20, 512, false, opener);
                } catch (RuntimeException e) {
                    o = e;
                }
                synchronized (outcomes) {
                    outcomes.add(o);
                }
            }));
        }
        try {
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(10_000);
            }
            assertEquals(2, outcomes.size(), "both opens ended");
            FileDevice winner = null;
            int refused = 0;
            for (Object o : outcomes) {
                if (o instanceof FileDevice d) {
                    winner = d;
                } else if (o instanceof StoreLockedException) {
                    refused++;
                } else {
                    throw new AssertionError("an open failed otherwise", (Throwable) o);
                }
            }
            assertEquals(1, refused, "one open refused: " + outcomes);
            assertTrue(winner != null, "one open won");
            assertTrue(ProcLocks.lockedByThisProcess(file), "the file is still locked by the open that won");
            assertEquals(0, ProcessLocks.openingPaths(), "no opening lock kept once the opens are done");
        } finally {
            for (Object o : outcomes) {
                if (o instanceof FileDevice d) {
                    d.close();
                }
            }
            Files.deleteIfExists(file);
        }
    }
}
