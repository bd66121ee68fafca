package org.htod.bench.workload;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * Object content: a fixed block of HTML-like text, generated once from a seed, copied from a
 * per-object offset and stamped with the object's index and version. Cheap to make (one array
 * copy), different for every object and version, never all zeros, and about as compressible as
 * the HTML fragments of the paper's Olympic site.
 */
final class Text {

    /** Length of the text block; values longer than this repeat it. */
    static final int LENGTH = 256 * 1024;

    private static final String[] WORDS = {
        "the", "results", "final", "heat", "gold", "silver", "bronze", "medal", "record", "world",
        "olympic", "Sydney", "athlete", "team", "score", "time", "round", "semi", "quarter", "men",
        "women", "relay", "metres", "points", "event", "session", "venue", "schedule", "news", "photo"
    };

    private static final String[] TAGS = {"p", "td", "li", "span", "b", "a href=\"/olympics/\""};

    /** Declared after the word lists it is made from. */
    private static final byte[] BLOCK = generate(LENGTH);

    private Text() {}

    /** {@code size} bytes of text starting at {@code offset} in the block, stamped with index and version. */
    static byte[] fill(int size, long index, int version, int offset) {
        byte[] out = new byte[size];
        int pos = 0;
        int from = offset;
        while (pos < size) {
            int n = Math.min(size - pos, LENGTH - from);
            System.arraycopy(BLOCK, from, out, pos, n);
            pos += n;
            from = 0;
        }
        byte[] stamp = ("<!-- object " + index + " version " + version + " -->")
                .getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(stamp, 0, out, 0, Math.min(stamp.length, size));
        return out;
    }

    private static byte[] generate(int length) {
        SplittableRandom rnd = new SplittableRandom(0x48544D4CL);
        StringBuilder sb = new StringBuilder(length + 256);
        while (sb.length() < length) {
            String tag = TAGS[rnd.nextInt(TAGS.length)];
            String close = tag.split(" ")[0];
            sb.append('<').append(tag).append('>');
            int words = 3 + rnd.nextInt(12);
            for (int w = 0; w < words; w++) {
                if (w > 0) {
                    sb.append(' ');
                }
                sb.append(WORDS[rnd.nextInt(WORDS.length)]);
                if (rnd.nextInt(8) == 0) {
                    sb.append(' ').append(rnd.nextInt(100_000));
                }
            }
            sb.append("</").append(close).append(">\n");
        }
        byte[] all = sb.toString().getBytes(StandardCharsets.US_ASCII);
        byte[] block = new byte[length];
        System.arraycopy(all, 0, block, 0, length);
        return block;
    }
}
