package org.htod.core.device;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/** Reads the system's record locks, where it lists them in {@code /proc/locks}. */
public final class ProcLocks {
    private ProcLocks() {}

    /** Whether {@code /proc/locks} lists a POSIX lock of this process on {@code file} (the test is skipped without it). */
    public static boolean lockedByThisProcess(Path file) throws IOException {
        Path locks = Path.of("/proc/locks");
        Assumptions.assumeTrue(Files.isReadable(locks), "no /proc/locks to read the file's lock from");
        long inode = ((Number) Files.getAttribute(file, "unix:ino")).longValue();
        String pid = Long.toString(ProcessHandle.current().pid());
        for (String line : Files.readAllLines(locks)) {
            String[] f = line.trim().split("\\s+");
            // "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF", after a "->" for a waiter
            int at = f.length > 1 && f[1].equals("->") ? 1 : 0;
            if (f.length >= at + 6 && f[at + 1].equals("POSIX") && f[at + 4].equals(pid)
                    && f[at + 5].endsWith(":" + inode)) {
                return true;
            }
        }
        return false;
    }
}
