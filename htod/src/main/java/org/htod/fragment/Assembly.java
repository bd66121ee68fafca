package org.htod.fragment;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.htod.core.HtodException;

/**
 * An assembled fragment as cache2 keeps it: the text, and where in it each direct include's
 * text sits (a span). Spans are what make reconstruction possible: when included fragments change,
 * only their spans are replaced, and the rest of the text is copied as it was.
 *
 * <pre>
 * offset size
 *      0    1  format: 1
 *      1    4  number of spans n
 *      5    .  n spans, in text order: 4 start, 4 length (in chars of the text), 2 path length, UTF-8 path
 *      .    .  the text, UTF-8, to the end of the value
 * </pre>
 */
final class Assembly {
    private static final byte FORMAT = 1;

    /** The text of {@code path}'s include at chars {@code start .. start+length} of the assembled text. */
    record Span(String path, int start, int length) {}

    final String text;
    final List<Span> spans;

    private Assembly(String text, List<Span> spans) {
        this.text = text;
        this.spans = spans;
    }

    /**
     * Assembles {@code source}: each include replaced by {@code textOf} its path.
     *
     * @param limit the most characters the assembly may have: a store holds no larger value
     * @throws org.htod.EntryTooLargeException past it, before any more is built: a page that
     *     includes one large fragment thousands of times (a request of 660 KB naming a fragment of
     *     100 KB 20,000 times) would take gigabytes, and ran the process out of memory
     */
    static Assembly assemble(String source, List<Include> includes, Function<String, String> textOf, long limit,
            String path) {
        StringBuilder b = new StringBuilder(source.length() * 2);
        List<Span> spans = new ArrayList<>(includes.size());
        int prev = 0;
        for (Include inc : includes) {
            b.append(source, prev, inc.start());
            String t = textOf.apply(inc.path());
            within(b.length() + (long) t.length(), limit, path);
            spans.add(new Span(inc.path(), b.length(), t.length()));
            b.append(t);
            prev = inc.end();
        }
        b.append(source, prev, source.length());
        within(b.length(), limit, path);
        return new Assembly(b.toString(), spans);
    }

    private static void within(long chars, long limit, String path) {
        if (chars > limit) {
            throw new org.htod.EntryTooLargeException("the page " + path + " would assemble to more than " + limit
                    + " characters, more than the store holds in one value");
        }
    }

    /**
     * Fragment reconstruction: this assembly with the span of every include in {@code changed}
     * replaced by {@code textOf} its path; every other character is copied from this assembly.
     */
    Assembly reconstruct(Set<String> changed, Function<String, String> textOf, long limit, String path) {
        StringBuilder b = new StringBuilder(text.length() + 64);
        List<Span> out = new ArrayList<>(spans.size());
        int prev = 0;
        for (Span s : spans) {
            b.append(text, prev, s.start());
            String t = changed.contains(s.path()) ? textOf.apply(s.path()) : text.substring(s.start(), s.start() + s.length());
            within(b.length() + (long) t.length() + (text.length() - s.start() - s.length()), limit, path);
            out.add(new Span(s.path(), b.length(), t.length()));
            b.append(t);
            prev = s.start() + s.length();
        }
        b.append(text, prev, text.length());
        return new Assembly(b.toString(), out);
    }

    byte[] encode() {
        List<byte[]> paths = new ArrayList<>(spans.size());
        int size = 5;
        for (Span s : spans) {
            byte[] p = s.path().getBytes(StandardCharsets.UTF_8);
            paths.add(p);
            size += 10 + p.length;
        }
        byte[] t = text.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(size + t.length).put(FORMAT).putInt(spans.size());
        for (int i = 0; i < spans.size(); i++) {
            Span s = spans.get(i);
            b.putInt(s.start()).putInt(s.length()).putShort((short) paths.get(i).length).put(paths.get(i));
        }
        return b.put(t).array();
    }

    static Assembly decode(String path, byte[] v) {
        try {
            ByteBuffer b = ByteBuffer.wrap(v);
            if (b.get() != FORMAT) {
                throw new HtodException("assembled '" + path + "': expected format " + FORMAT + ", found " + v[0]);
            }
            int n = b.getInt();
            List<Span> spans = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int start = b.getInt();
                int length = b.getInt();
                byte[] p = new byte[Short.toUnsignedInt(b.getShort())];
                b.get(p);
                spans.add(new Span(new String(p, StandardCharsets.UTF_8), start, length));
            }
            String text = new String(v, b.position(), b.remaining(), StandardCharsets.UTF_8);
            // Checked before use: a span out of the text, or before the one ahead of it, made a
            // reconstruction throw StringIndexOutOfBoundsException.
            int end = 0;
            for (Span s : spans) {
                if (s.start() < end || s.length() < 0 || s.start() > text.length() - s.length()) {
                    throw new HtodException("assembled '" + path + "': the span of '" + s.path() + "' at chars "
                            + s.start() + " (+" + s.length() + ") is not within its text of " + text.length()
                            + " chars after the span before it, ending at " + end);
                }
                end = s.start() + s.length();
            }
            return new Assembly(text, spans);
        } catch (RuntimeException e) {
            if (e instanceof HtodException) {
                throw e;
            }
            throw new HtodException("assembled '" + path + "': a value of " + v.length + " bytes cannot be read: " + e, e);
        }
    }

    /** Just the text of an encoded assembly, without building its spans. */
    static String text(String path, byte[] v) {
        try {
            ByteBuffer b = ByteBuffer.wrap(v);
            if (b.get() != FORMAT) {
                throw new HtodException("assembled '" + path + "': expected format " + FORMAT + ", found " + v[0]);
            }
            int n = b.getInt();
            for (int i = 0; i < n; i++) {
                b.position(b.position() + 8);
                b.position(b.position() + 2 + Short.toUnsignedInt(b.getShort(b.position())));
            }
            return new String(v, b.position(), b.remaining(), StandardCharsets.UTF_8);
        } catch (RuntimeException e) {
            if (e instanceof HtodException) {
                throw e;
            }
            throw new HtodException("assembled '" + path + "': a value of " + v.length + " bytes cannot be read: " + e, e);
        }
    }
}
