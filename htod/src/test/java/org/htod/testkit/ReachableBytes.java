package org.htod.testkit;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The bytes of the arrays and buffers reachable from an object, found by walking its graph: for
 * a test that a closed store or a map of it holds no memory worth speaking of. Counted: every
 * primitive array (its length times its element's size), every reference array (a reference a
 * slot), every {@link ByteBuffer} (its capacity; a heap buffer as its backing array). Walked: the
 * instance fields of htod's own classes (lambdas made in them included), and through their public
 * methods the JDK's collections, maps and atomic references. Not walked: other JDK objects (their
 * fields are closed to reflection by java.base), classes and their static fields, threads. The
 * objects themselves (nodes, locks, headers) are not counted: the total is a lower bound, which
 * the large holdings (buffers, cached bytes, a memory device's chunks) dominate. Deterministic:
 * nothing waits for the garbage collector.
 */
public final class ReachableBytes {
    /** An object reached, and the field it was reached by (its parent, null for the root). */
    private record Reached(Object object, String via, Reached parent) {
        String path() {
            List<String> steps = new ArrayList<>();
            for (Reached r = this; r != null; r = r.parent) {
                steps.add(r.via);
            }
            java.util.Collections.reverse(steps);
            return String.join("", steps); // not recursive: a chain of nodes may be long
        }
    }

    /** An array or buffer counted, where it was found, and its bytes. */
    public record Part(String path, String type, long bytes) {
        @Override
        public String toString() {
            return path + " (" + type + ", " + bytes + " bytes)";
        }
    }

    private final List<Part> parts = new ArrayList<>();
    private long total;

    private ReachableBytes() {}

    /** Walks the graph from {@code root}, named {@code name} in the paths reported. */
    public static ReachableBytes from(String name, Object root) {
        ReachableBytes r = new ReachableBytes();
        r.walk(new Reached(root, name, null));
        return r;
    }

    /** The bytes counted. */
    public long total() {
        return total;
    }

    /**
     * Where the bytes are: the arrays and buffers counted, grouped by their path with the indices
     * and entries of arrays and collections left out ({@code [*]}, <code>{*}</code>: the values of
     * a map count together), the {@code n} largest groups, largest first.
     */
    public List<Part> largest(int n) {
        Map<String, long[]> groups = new java.util.HashMap<>();
        Map<String, String> types = new java.util.HashMap<>();
        for (Part p : parts) {
            String path = p.path().replaceAll("\\[\\d+\\]", "[*]").replaceAll("\\{(key |value )?\\d+\\}", "{$1*}");
            groups.computeIfAbsent(path, k -> new long[2])[0] += p.bytes();
            groups.get(path)[1]++;
            types.put(path, p.type());
        }
        return groups.entrySet().stream()
                .map(e -> new Part(e.getKey(), e.getValue()[1] + " x " + types.get(e.getKey()), e.getValue()[0]))
                .sorted(Comparator.comparingLong(Part::bytes).reversed()).limit(n).toList();
    }

    @Override
    public String toString() {
        return total + " bytes in " + parts.size() + " arrays and buffers, most of them in " + largest(4);
    }

    private void walk(Reached root) {
        IdentityHashMap<Object, Boolean> seen = new IdentityHashMap<>();
        ArrayDeque<Reached> queue = new ArrayDeque<>();
        queue.add(root);
        seen.put(root.object(), true);
        while (!queue.isEmpty()) {
            Reached r = queue.poll();
            for (Reached next : visit(r)) {
                if (next.object() != null && seen.put(next.object(), true) == null) {
                    queue.add(next);
                }
            }
        }
    }

    /** Counts {@code r}'s object if it holds bytes, and returns what it refers to. */
    private List<Reached> visit(Reached r) {
        Object o = r.object();
        Class<?> c = o.getClass();
        List<Reached> out = new ArrayList<>();
        if (c.isArray()) {
            Class<?> e = c.getComponentType();
            int n = java.lang.reflect.Array.getLength(o);
            count(r, c.getSimpleName(), (long) n * elementBytes(e));
            if (!e.isPrimitive()) {
                Object[] a = (Object[]) o;
                for (int i = 0; i < a.length; i++) {
                    out.add(new Reached(a[i], "[" + i + "]", r));
                }
            }
        } else if (o instanceof ByteBuffer b) {
            if (b.hasArray()) {
                out.add(new Reached(b.array(), ".array()", r));
            } else {
                count(r, b.isDirect() ? "direct ByteBuffer" : "ByteBuffer", b.capacity());
            }
        } else if (own(c) && !c.isEnum()) {
            for (Class<?> k = c; own(k); k = k.getSuperclass()) { // a JDK superclass's fields are closed
                for (Field f : k.getDeclaredFields()) {
                    if (!Modifier.isStatic(f.getModifiers()) && !f.getType().isPrimitive()) {
                        out.add(new Reached(read(f, o), "." + f.getName(), r));
                    }
                }
            }
        } else if (o instanceof Map<?, ?> m) {
            int i = 0;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                out.add(new Reached(e.getKey(), "{key " + i + "}", r));
                out.add(new Reached(e.getValue(), "{value " + i + "}", r));
                i++;
            }
        } else if (o instanceof Collection<?> col) {
            int i = 0;
            for (Object e : col) {
                out.add(new Reached(e, "{" + i++ + "}", r));
            }
        } else if (o instanceof AtomicReference<?> a) {
            out.add(new Reached(a.get(), ".get()", r));
        } else if (o instanceof AtomicReferenceArray<?> a) {
            for (int i = 0; i < a.length(); i++) {
                out.add(new Reached(a.get(i), ".get(" + i + ")", r));
            }
        }
        return out;
    }

    private static boolean own(Class<?> c) {
        return c != null && c.getName().startsWith("org.htod.");
    }

    private void count(Reached r, String type, long bytes) {
        total += bytes;
        parts.add(new Part(r.path(), type, bytes));
    }

    private static Object read(Field f, Object o) {
        try {
            f.setAccessible(true);
            return f.get(o);
        } catch (IllegalAccessException e) {
            throw new AssertionError("cannot read " + f + " of " + o.getClass().getName(), e);
        }
    }

    private static int elementBytes(Class<?> e) {
        if (e == byte.class || e == boolean.class) {
            return 1;
        }
        if (e == short.class || e == char.class) {
            return 2;
        }
        if (e == long.class || e == double.class) {
            return 8;
        }
        return 4; // int, float, a reference
    }
}
