package org.htod.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Base64;
import org.htod.StoreEntry;

/**
 * One entry as one JSON line, what {@code dump} and {@code export} write and {@code import}
 * reads: {@code {"map":"pages","key":"/index.html","value":"<html>…","expiresAt":0,"version":1}}.
 * A key or value that is well-formed UTF-8 is written as text under {@code key} / {@code value}
 * (it encodes back to the same bytes); any other is base64 under {@code key64} / {@code value64}.
 * A store does not record its maps' codecs, so the bytes are all the tool can know.
 */
final class EntryLines {
    private EntryLines() {}

    static ObjectNode write(StoreEntry e, boolean keysOnly) {
        ObjectNode n = Json.MAPPER.createObjectNode();
        n.put("map", e.map());
        bytes(n, "key", e.key());
        if (!keysOnly) {
            bytes(n, "value", e.value());
            n.put("expiresAt", e.expiresAt());
            n.put("version", e.version());
        }
        return n;
    }

    private static void bytes(ObjectNode n, String field, byte[] b) {
        String t = Json.text(b);
        if (t != null) {
            n.put(field, t);
        } else {
            n.put(field + "64", Base64.getEncoder().encodeToString(b));
        }
    }

    /** The entry a line holds; {@code line} (1-based) names it in errors. */
    static StoreEntry read(JsonNode n, long line) {
        if (!n.isObject() || !n.hasNonNull("map")) {
            throw new IllegalArgumentException("line " + line + ": expected an object with \"map\", found " + shorten(n));
        }
        return new StoreEntry(n.get("map").asText(), bytes(n, "key", line), bytes(n, "value", line),
                n.path("expiresAt").asLong(0), n.path("version").asLong(0));
    }

    private static byte[] bytes(JsonNode n, String field, long line) {
        if (n.hasNonNull(field)) {
            return n.get(field).asText().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
        if (n.hasNonNull(field + "64")) {
            try {
                return Base64.getDecoder().decode(n.get(field + "64").asText());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("line " + line + ": \"" + field + "64\" is not base64", e);
            }
        }
        throw new IllegalArgumentException("line " + line + ": expected \"" + field + "\" or \"" + field + "64\", found "
                + shorten(n));
    }

    private static String shorten(JsonNode n) {
        String s = n.toString();
        return s.length() > 80 ? s.substring(0, 77) + "..." : s;
    }
}
