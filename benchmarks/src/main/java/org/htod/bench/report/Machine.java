package org.htod.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** What the results were measured on, written beside them: cores, CPU, memory, disk, JDK. */
final class Machine {
    private Machine() {}

    static String describe() {
        return "Machine: " + Runtime.getRuntime().availableProcessors() + " cores (" + cpu() + "), "
                + memoryGiB() + " GiB memory, " + disk() + ", Java " + System.getProperty("java.vm.version") + " ("
                + System.getProperty("java.vm.vendor") + ").";
    }

    private static String cpu() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException e) {
            // not Linux: leave the model out
        }
        return "model unknown";
    }

    private static long memoryGiB() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/meminfo"));
            long kb = Long.parseLong(lines.get(0).replaceAll("\\D+", ""));
            return Math.round(kb / 1024.0 / 1024.0);
        } catch (IOException | RuntimeException e) {
            return Runtime.getRuntime().maxMemory() >> 30;
        }
    }

    private static String disk() {
        try {
            var store = Files.getFileStore(Path.of(System.getProperty("htod.bench.dir", ".")).toAbsolutePath());
            return "file system " + store.type() + " on " + store.name();
        } catch (IOException | RuntimeException e) {
            return "disk unknown";
        }
    }
}
