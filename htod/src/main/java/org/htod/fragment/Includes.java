package org.htod.fragment;

import java.util.ArrayList;
import java.util.List;

/** The include syntax: parsing of directives and the rules for fragment paths. */
final class Includes {
    static final String OPEN = "<!--#include";
    private static final String ATTRIBUTE = "virtual=\"";
    private static final String CLOSE = "-->";
    static final int MAX_PATH = 1024;

    private Includes() {}

    /** The include directives of {@code source}, in order. */
    static List<Include> parse(String source) {
        List<Include> out = new ArrayList<>();
        int from = 0;
        int at;
        while ((at = source.indexOf(OPEN, from)) >= 0) {
            int p = at + OPEN.length();
            if (p >= source.length() || !Character.isWhitespace(source.charAt(p))) {
                throw new MalformedIncludeException("expected a space after " + OPEN + ", found " + found(source, p), p);
            }
            p = skipSpaces(source, p);
            if (!source.startsWith(ATTRIBUTE, p)) {
                throw new MalformedIncludeException("expected " + ATTRIBUTE + "/path\", found " + found(source, p), p);
            }
            p += ATTRIBUTE.length();
            int q = source.indexOf('"', p);
            if (q < 0) {
                throw new MalformedIncludeException("the path has no closing quote", p);
            }
            String path = source.substring(p, q);
            String why = pathProblem(path);
            if (why != null) {
                throw new MalformedIncludeException(why, p);
            }
            p = skipSpaces(source, q + 1);
            if (!source.startsWith(CLOSE, p)) {
                throw new MalformedIncludeException("expected " + CLOSE + ", found " + found(source, p), p);
            }
            out.add(new Include(path, at, p + CLOSE.length()));
            from = p + CLOSE.length();
        }
        return out;
    }

    private static int skipSpaces(String s, int p) {
        while (p < s.length() && Character.isWhitespace(s.charAt(p))) {
            p++;
        }
        return p;
    }

    private static String found(String s, int p) {
        if (p >= s.length()) {
            return "the end of the source";
        }
        String f = s.substring(p, Math.min(s.length(), p + 12)).replace('\n', ' ');
        return "'" + f + (p + 12 < s.length() ? "...'" : "'");
    }

    /**
     * Why {@code path} is not a fragment path, or null if it is one: it starts with '/', has at
     * most {@link #MAX_PATH} characters, no empty, "." or ".." segment, and only letters, digits and
     * {@code - . _ ~ / % + , = : @}.
     */
    static String pathProblem(String path) {
        if (path.isEmpty() || path.charAt(0) != '/') {
            return "a fragment path starts with '/': '" + shorten(path) + "'";
        }
        if (path.length() > MAX_PATH) {
            return "a fragment path has at most " + MAX_PATH + " characters, found " + path.length();
        }
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || "-._~/%+,=:@".indexOf(c) >= 0;
            if (!ok) {
                return "a fragment path holds only letters, digits and -._~/%+,=:@, found '" + printable(c) + "' in '"
                        + shorten(path) + "'";
            }
        }
        for (String seg : path.substring(1).split("/", -1)) {
            if (seg.isEmpty() || seg.equals(".") || seg.equals("..")) {
                return "a fragment path has no empty, '.' or '..' segment: '" + shorten(path) + "'";
            }
        }
        return null;
    }

    private static String printable(char c) {
        return c < 0x20 || c == 0x7f ? String.format("\\u%04x", (int) c) : String.valueOf(c);
    }

    private static String shorten(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }
}
