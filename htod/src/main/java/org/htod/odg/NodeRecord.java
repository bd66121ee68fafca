package org.htod.odg;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;
import org.htod.core.HtodException;

/**
 * A node of the graph as one value of the nodes map: its level and its two edge sets, each held
 * inline while it has at most {@link DependencyGraph#INLINE_EDGES} members and in buckets of the
 * edges map above that.
 *
 * <pre>
 * offset size
 *      0    1  format: 1
 *      1    4  level: every edge goes from a lower level to a higher one
 *      5    .  side "uses" (what this node includes), then side "used by" (what includes it):
 *              4  count of members
 *              4  buckets: 0 when the members follow inline, else how many buckets hold them
 *              .  if inline, count times: 2-byte length, then the UTF-8 name
 * </pre>
 *
 * A bucket value is: 4-byte count, then count times a 2-byte length and a UTF-8 name.
 */
final class NodeRecord {
    static final byte FORMAT = 1;
    private static final int FORMAT_OFFSET = 0;
    private static final int LEVEL_OFFSET = 1;
    private static final int SIDES_OFFSET = 5;

    int level;
    final Side uses = new Side();
    final Side usedBy = new Side();

    /** One direction of a node's edges. */
    static final class Side {
        int count;
        /** 0: the members are {@link #inline}; else a power of two, the buckets holding them. */
        int buckets;
        final Set<String> inline = new LinkedHashSet<>();
    }

    byte[] encode() {
        int size = SIDES_OFFSET + sideSize(uses) + sideSize(usedBy);
        ByteBuffer b = ByteBuffer.allocate(size);
        b.put(FORMAT_OFFSET, FORMAT).putInt(LEVEL_OFFSET, level).position(SIDES_OFFSET);
        putSide(b, uses);
        putSide(b, usedBy);
        return b.array();
    }

    static NodeRecord decode(String node, byte[] bytes) {
        try {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            if (b.get(FORMAT_OFFSET) != FORMAT) {
                throw new HtodException("graph node '" + node + "': expected record format " + FORMAT + ", found "
                        + b.get(FORMAT_OFFSET));
            }
            NodeRecord r = new NodeRecord();
            r.level = b.getInt(LEVEL_OFFSET);
            b.position(SIDES_OFFSET);
            getSide(b, r.uses, node, "uses");
            getSide(b, r.usedBy, node, "used by");
            if (b.hasRemaining()) {
                throw new HtodException("graph node '" + node + "': " + b.remaining() + " bytes after the record");
            }
            return r;
        } catch (RuntimeException e) {
            if (e instanceof HtodException) {
                throw e;
            }
            throw new HtodException("graph node '" + node + "': a record of " + bytes.length + " bytes cannot be read: " + e,
                    e);
        }
    }

    private static int sideSize(Side s) {
        return 8 + (s.buckets == 0 ? namesSize(s.inline) : 0);
    }

    private static void putSide(ByteBuffer b, Side s) {
        // Inline, the count is the names that follow, whatever the field says: a record that
        // said otherwise could not be read again.
        b.putInt(s.buckets == 0 ? s.inline.size() : s.count).putInt(s.buckets);
        if (s.buckets == 0) {
            for (String n : s.inline) {
                putName(b, n);
            }
        }
    }

    private static void getSide(ByteBuffer b, Side s, String node, String side) {
        s.count = b.getInt();
        s.buckets = b.getInt();
        // Bucketed sides are a power of two of at least 2 buckets (their members are found by
        // masking a hash); a negative count or bucket count read as an empty side, and its edges
        // vanished from every walk, the cycle check's included.
        if (s.count < 0 || s.buckets < 0 || s.buckets == 1 || Integer.bitCount(s.buckets) > 1) {
            throw new HtodException("graph node '" + node + "': its '" + side + "' side says " + s.count + " members in "
                    + s.buckets + " buckets: a count below 0, or buckets neither 0 nor a power of two of at least 2");
        }
        if (s.buckets == 0) {
            for (int i = 0; i < s.count; i++) {
                s.inline.add(getName(b));
            }
        }
    }

    static byte[] encodeBucket(Collection<String> names) {
        ByteBuffer b = ByteBuffer.allocate(4 + namesSize(names)).putInt(names.size());
        for (String n : names) {
            putName(b, n);
        }
        return b.array();
    }

    static Set<String> decodeBucket(String key, byte[] bytes) {
        try {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            int n = b.getInt();
            Set<String> out = new LinkedHashSet<>();
            for (int i = 0; i < n; i++) {
                out.add(getName(b));
            }
            return out;
        } catch (RuntimeException e) {
            throw new HtodException("graph edge bucket '" + key.replace('\0', '|') + "': a value of " + bytes.length
                    + " bytes cannot be read: " + e, e);
        }
    }

    private static int namesSize(Collection<String> names) {
        int n = 0;
        for (String s : names) {
            n += 2 + s.getBytes(StandardCharsets.UTF_8).length;
        }
        return n;
    }

    private static void putName(ByteBuffer b, String n) {
        byte[] u = n.getBytes(StandardCharsets.UTF_8);
        b.putShort((short) u.length).put(u);
    }

    private static String getName(ByteBuffer b) {
        int len = Short.toUnsignedInt(b.getShort());
        byte[] u = new byte[len];
        b.get(u);
        return new String(u, StandardCharsets.UTF_8);
    }
}
