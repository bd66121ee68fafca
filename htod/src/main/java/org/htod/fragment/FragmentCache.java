package org.htod.fragment;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.htod.Codec;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.odg.DependencyGraph;
import org.htod.odg.GraphEdit;
import org.htod.odg.WriteUnit;

/**
 * The fragment caches of a publishing system (core paper §4.2), in maps of one store: cache1
 * ({@code <name>.cache1}) holds every fragment as published, keyed by its URL path; cache2
 * ({@code <name>.cache2}) holds every composite (a fragment that includes others) assembled;
 * an expiry table ({@code <name>.expiry}) holds when fragments published with a time to live
 * die; and a {@link DependencyGraph} ({@code <name>.odg}) says which fragment includes which.
 *
 * <h2>Include syntax</h2>
 *
 * A fragment includes another with a server-side-include directive:
 *
 * <pre>{@code <!--#include virtual="/results/ski/slalom.html" -->}</pre>
 *
 * that is {@code <!--#include}, at least one space, {@code virtual="}, a path, {@code "},
 * optional spaces and {@code -->}. A path starts with {@code /}, has at most 1024 characters,
 * no empty, {@code .} or {@code ..} segment, and only letters, digits and {@code - . _ ~ / % + ,
 * = : @}. Any text that starts with {@code <!--#include} and is not such a directive is refused
 * with a {@link MalformedIncludeException}. Assembly replaces each directive by the included
 * fragment's own assembly; a path that is not published (yet, or any more) assembles to nothing.
 * An include that would close a cycle is refused with a {@link org.htod.odg.CycleException}.
 *
 * <h2>Publishing</h2>
 *
 * {@link #apply} takes changes (publish, unpublish) and makes, as one {@link WriteUnit}: the new
 * sources in cache1, the graph's edges for their includes, and every affected composite rebuilt in
 * cache2 in dependency order. A composite whose own source changed is assembled from it; one
 * whose includes changed is rebuilt by <em>fragment reconstruction</em> (paper 002): the spans of
 * the changed includes are replaced, the rest of its cached text is kept. The unit is durable
 * when {@code apply} returns, and in log mode (the store's default) one atomic batch: after a
 * crash the store holds all of it or none of it. See {@link WriteUnit} for direct mode, and for
 * the limit on a unit's size.
 * Publishes are serialized by the graph's edit lock; reads take no lock. Open one cache object
 * per cache and store, and share it: two objects over one cache have two locks.
 */
public final class FragmentCache {
    private final HtodStore store;
    private final HtodMap<String, String> cache1;
    private final HtodMap<String, byte[]> cache2;
    private final HtodMap<String, Long> expiry;
    private final DependencyGraph graph;
    private final Clock clock;

    private FragmentCache(HtodStore store, String name, Clock clock) {
        this.store = store;
        this.cache1 = store.map(name + ".cache1", Codec.string(), Codec.string());
        this.cache2 = store.map(name + ".cache2", Codec.string(), Codec.bytes());
        this.expiry = store.map(name + ".expiry", Codec.string(), Codec.longs());
        this.graph = DependencyGraph.open(store, name + ".odg");
        this.clock = clock;
    }

    /** The cache called {@code name} in {@code store}, created empty if absent; expiry by the system clock. */
    public static FragmentCache open(HtodStore store, String name) {
        return open(store, name, Clock.systemUTC());
    }

    /** As {@link #open(HtodStore, String)}, with the clock that times to live are measured by. */
    public static FragmentCache open(HtodStore store, String name, Clock clock) {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(clock, "clock");
        if (Objects.requireNonNull(name, "name").isEmpty()) {
            throw new IllegalArgumentException("a cache name must not be empty");
        }
        return new FragmentCache(store, name, clock);
    }

    /** The include directives of {@code source}, in order. */
    public static List<Include> includes(String source) {
        return Includes.parse(Objects.requireNonNull(source, "source"));
    }

    /** Why {@code path} is not a fragment path (see the include syntax), or null if it is one. */
    public static String pathProblem(String path) {
        return Includes.pathProblem(Objects.requireNonNull(path, "path"));
    }

    public DependencyGraph graph() {
        return graph;
    }

    // ------------------------------------------------------------------ reads

    /** The fragment as published, or null. */
    public String source(String path) {
        return cache1.get(path);
    }

    /** The fragment assembled (its source if it includes nothing), or null if it is not published. */
    public String page(String path) {
        return assembled(path, cache2::get, cache1::get, pageLimit());
    }

    /** When the fragment's time to live ends, or null if it has none. */
    public Instant expiresAt(String path) {
        Long t = expiry.get(path);
        return t == null ? null : Instant.ofEpochMilli(t);
    }

    /** Fragments published (cache1). */
    public long fragmentCount() {
        return cache1.longSize();
    }

    /** Composites assembled (cache2). */
    public long assembledCount() {
        return cache2.longSize();
    }

    /** Fragments with a time to live (the expiry table). */
    public long expiringCount() {
        return expiry.longSize();
    }

    // ------------------------------------------------------------------ publishing

    public PublishResult publish(String path, String source) {
        return apply(List.of(Change.publish(path, source)));
    }

    public PublishResult publish(String path, String source, Duration ttl) {
        return apply(List.of(Change.publish(path, source, ttl)));
    }

    public PublishResult unpublish(String path) {
        return apply(List.of(Change.unpublish(path)));
    }

    /**
     * Applies {@code changes} as one unit: sources, graph edges, expiry entries and every affected
     * assembly. The outcome for a path is its last change in the list; an include cycle is judged
     * on the outcome, not on the steps. Either all are written or, if one is refused, none.
     *
     * @throws MalformedIncludeException if a source has a malformed include (nothing written)
     * @throws org.htod.odg.CycleException if an include would close a cycle (nothing written)
     * @throws org.htod.EntryTooLargeException in log mode, if the unit's writes (sources and every
     *     rebuilt assembly) exceed one log record (nothing written)
     */
    public PublishResult apply(List<Change> changes) {
        for (Change c : changes) {
            if (!c.isUnpublish()) {
                Includes.parse(c.source()); // refuse a malformed source before taking the lock
            }
        }
        return run(changes, false);
    }

    /** Fragments a sweep unpublishes in one unit at most: see {@link #sweepExpired}. */
    static final int SWEEP_UNIT = 1024;

    /**
     * Unpublishes every fragment whose time to live has ended, in units of at most {@link
     * #SWEEP_UNIT} (fewer where the pages they rebuild make a unit too large for one log record),
     * and rebuilds what included them (their includes now assemble to nothing). A fragment
     * republished meanwhile with a later expiry is left alone. All of them in one unit failed
     * once too many had expired for one log record (a backlog after a stop, a burst of short
     * lives), and every later sweep failed the same, while more expired. A fragment whose rebuilt
     * pages alone exceed a record is passed over, the others unpublished, and then reported.
     *
     * @return the units' results together; {@code changed} are the fragments unpublished
     * @throws org.htod.EntryTooLargeException after unpublishing the others, if such a fragment was met
     */
    public PublishResult sweepExpired() {
        long now = clock.millis();
        List<Change> due = new ArrayList<>();
        for (Map.Entry<String, Long> e : expiry.entrySet()) {
            if (e.getValue() <= now) {
                due.add(Change.unpublish(e.getKey()));
            }
        }
        List<String> changed = new ArrayList<>();
        Set<String> rebuilt = new LinkedHashSet<>(); // a page may be rebuilt by more than one unit
        int reconstructed = 0;
        int writes = 0;
        int unit = SWEEP_UNIT;
        org.htod.EntryTooLargeException alone = null;
        for (int from = 0; from < due.size();) {
            List<Change> part = due.subList(from, Math.min(due.size(), from + unit));
            PublishResult r;
            try {
                r = run(part, true);
            } catch (org.htod.EntryTooLargeException e) {
                if (part.size() == 1) {
                    // One fragment whose rebuilt pages alone exceed a record, as a publish of it
                    // would: passed over, so that the ones after it expire, and reported at the end.
                    alone = alone == null ? e : alone;
                    from++;
                    unit = SWEEP_UNIT;
                    continue;
                }
                unit = Math.max(1, part.size() / 2);
                continue;
            }
            changed.addAll(r.changed());
            rebuilt.addAll(r.rebuilt());
            reconstructed += r.reconstructed();
            writes += r.writes();
            from += part.size();
        }
        if (alone != null) {
            throw alone; // the others are unpublished
        }
        return new PublishResult(changed, new ArrayList<>(rebuilt), reconstructed, writes);
    }

    private PublishResult run(List<Change> changes, boolean onlyExpired) {
        try (WriteUnit u = new WriteUnit(store)) {
            GraphEdit g = graph.edit(u); // first: the edit lock serializes units, reads below see the latest
            long now = clock.millis();
            // The unit's outcome is each path's last change, whatever came before it in the list.
            Map<String, Change> last = new LinkedHashMap<>();
            for (Change c : changes) {
                last.put(c.path(), c);
            }
            Set<String> changed = new LinkedHashSet<>();
            Map<String, Set<String>> includes = new LinkedHashMap<>();
            for (Change c : last.values()) {
                String p = c.path();
                if (onlyExpired) {
                    Long t = u.get(expiry, p);
                    if (t == null || t > now) {
                        continue;
                    }
                }
                Set<String> deps = new LinkedHashSet<>();
                if (c.isUnpublish()) {
                    if (u.get(cache1, p) == null) {
                        continue;
                    }
                    u.remove(cache1, p);
                    u.remove(cache2, p);
                    u.remove(expiry, p);
                } else {
                    u.put(cache1, p, c.source());
                    if (c.ttl() != null) {
                        u.put(expiry, p, c.expiresAt(now));
                    } else if (u.get(expiry, p) != null) {
                        u.remove(expiry, p);
                    }
                    for (Include inc : Includes.parse(c.source())) {
                        deps.add(inc.path());
                    }
                }
                includes.put(p, deps);
                changed.add(p);
            }
            // Every edge that goes away goes before any new one is added: the graph then passes only
            // through subsets of its final edges, and no cycle is seen that the outcome does not have.
            Set<String> dropped = new LinkedHashSet<>();
            for (Map.Entry<String, Set<String>> e : includes.entrySet()) {
                for (String d : g.dependencies(e.getKey())) {
                    if (!e.getValue().contains(d)) {
                        g.removeEdge(d, e.getKey());
                        dropped.add(d);
                    }
                }
                if (u.get(cache1, e.getKey()) == null) {
                    dropped.add(e.getKey());
                }
            }
            for (Map.Entry<String, Set<String>> e : includes.entrySet()) {
                if (u.get(cache1, e.getKey()) != null) {
                    g.setDependencies(e.getKey(), e.getValue());
                }
            }
            // A node that is neither published nor used by anything has no reason to stay.
            for (String p : dropped) {
                if (u.get(cache1, p) == null && g.dependents(p).isEmpty()) {
                    g.removeNode(p);
                }
            }
            List<String> rebuilt = new ArrayList<>();
            int reconstructed = 0;
            Set<String> fresh = new HashSet<>();
            for (String x : g.affected(changed)) {
                if (changed.contains(x)) {
                    String src = u.get(cache1, x);
                    List<Include> inc = src == null ? List.of() : Includes.parse(src);
                    if (inc.isEmpty()) {
                        if (u.get(cache2, x) != null) {
                            u.remove(cache2, x);
                        }
                    } else {
                        u.put(cache2, x, Assembly.assemble(src, inc, p -> text(u, p), pageLimit(), x).encode());
                        rebuilt.add(x);
                    }
                } else {
                    byte[] old = u.get(cache2, x);
                    Assembly a;
                    if (old != null) {
                        a = Assembly.decode(x, old).reconstruct(fresh, p -> text(u, p), pageLimit(), x);
                        reconstructed++;
                    } else {
                        String src = u.get(cache1, x);
                        if (src == null) {
                            continue; // uses something, so it was published; nothing to build if not
                        }
                        a = Assembly.assemble(src, Includes.parse(src), p -> text(u, p), pageLimit(), x);
                    }
                    u.put(cache2, x, a.encode());
                    rebuilt.add(x);
                }
                fresh.add(x);
            }
            int writes = u.size();
            u.commit();
            return new PublishResult(List.copyOf(changed), rebuilt, reconstructed, writes);
        }
    }

    /** The assembled text of {@code path} as the unit would leave it; "" if not published. */
    private String text(WriteUnit u, String path) {
        return Objects.requireNonNullElse(assembled(path, p -> u.get(cache2, p), p -> u.get(cache1, p), pageLimit()), "");
    }

    /**
     * The assembly of {@code path} from the given views of cache2 and cache1, or null if it is not
     * published. A composite always has its assembly in cache2 once a unit has committed; the
     * assembly from its source covers a read that runs while a unit's writes are being applied.
     */
    private static String assembled(String path, Function<String, byte[]> cache2, Function<String, String> cache1,
            long limit) {
        byte[] a = cache2.apply(path);
        if (a != null) {
            return Assembly.text(path, a);
        }
        String src = cache1.apply(path);
        if (src == null) {
            return null;
        }
        List<Include> inc = Includes.parse(src);
        return inc.isEmpty() ? src : Assembly.assemble(src, inc,
                p -> Objects.requireNonNullElse(assembled(p, cache2, cache1, limit), ""), limit, path).text;
    }

    /** The most characters a page may assemble to: 64 Mi, and no more than the store holds in one value. */
    private long pageLimit() {
        return Math.min(MAX_PAGE_CHARS, store.maxValueBytes());
    }

    /** A page's largest assembly, whatever the store could hold: past it a publish is refused, not built. */
    static final long MAX_PAGE_CHARS = 64L << 20;

    @Override
    public String toString() {
        return "FragmentCache[" + cache1.name() + ", " + fragmentCount() + " fragments, " + assembledCount()
                + " assembled]";
    }
}
