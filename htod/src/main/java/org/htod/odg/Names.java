package org.htod.odg;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** What a node name may be: stored with a 2-byte length and used in keys with a NUL separator. */
final class Names {
    /** Longest name, in UTF-8 bytes. */
    static final int MAX_BYTES = 4096;

    private Names() {}

    static String check(String name) {
        Objects.requireNonNull(name, "node name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("a node name must not be empty");
        }
        if (name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("a node name must not contain NUL: '" + name.replace('\0', '?') + "'");
        }
        if (name.length() > MAX_BYTES / 3 && name.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new IllegalArgumentException("a node name is at most " + MAX_BYTES + " UTF-8 bytes, found "
                    + name.getBytes(StandardCharsets.UTF_8).length);
        }
        return name;
    }
}
