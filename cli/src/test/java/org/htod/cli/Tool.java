package org.htod.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/** The tool run in the test's JVM, its output and errors kept. */
final class Tool {
    private Tool() {}

    record Run(int code, String out, String err) {
        /** Everything it printed, for assertion messages. */
        String all() {
            return "exit " + code + "\n" + out + err;
        }
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
        return new Run(code, out.toString(), err.toString());
    }

    /** Where the last copy of {@code needle} starts in {@code hay}, or -1: for a test that damages a stored value. */
    static int lastIndexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = hay.length - needle.length; i >= 0; i--) {
            for (int k = 0; k < needle.length; k++) {
                if (hay[i + k] != needle[k]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Flips a byte inside the last stored copy of {@code value} in the file {@code p}: a damaged entry. */
    static void damageValue(java.nio.file.Path p, String value) throws java.io.IOException {
        byte[] file = java.nio.file.Files.readAllBytes(p);
        int at = lastIndexOf(file, value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        org.junit.jupiter.api.Assertions.assertTrue(at > 0, "the value is in the file");
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(p.toFile(), "rw")) {
            f.seek(at + 3);
            f.write(file[at + 3] ^ 0x55);
        }
    }
}
