package org.htod.odg;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import org.htod.HtodMap;

/**
 * Changes to a {@link DependencyGraph} staged in a {@link WriteUnit}, and reads that see them.
 * Obtained from {@link DependencyGraph#edit(WriteUnit)}, which holds the graph's edit lock until
 * the unit is closed. Decoded records are kept here while the unit lives and moved into it when it
 * commits. If a change throws (a {@link CycleException}, a bad name), the unit can no longer be
 * committed: nothing of it is written.
 *
 * <p>An edge {@code dependency -> dependent} says that {@code dependent} uses {@code dependency}: a
 * change to the dependency affects the dependent.
 */
public final class GraphEdit {
    /** Members per bucket a spilled edge set aims at; it doubles its buckets past twice this. */
    static final int BUCKET_TARGET = 32;
    private static final char USES = 'u';
    private static final char USED_BY = 'd';
    /** Cached absence of a node, told apart from a node not read yet. */
    private static final NodeRecord ABSENT = new NodeRecord();

    private final DependencyGraph graph;
    private final WriteUnit unit;
    private final Map<String, NodeRecord> nodes = new HashMap<>();
    private final Set<String> dirtyNodes = new LinkedHashSet<>();
    private final Map<String, Set<String>> buckets = new HashMap<>();
    private final Set<String> dirtyBuckets = new LinkedHashSet<>();
    private long nodeDelta;
    private long edgeDelta;

    /** An edit in {@code unit}, or, with a null unit, a read-only view of the stored graph. */
    GraphEdit(DependencyGraph graph, WriteUnit unit) {
        this.graph = graph;
        this.unit = unit;
    }

    // ------------------------------------------------------------------ reads

    /** Whether {@code node} is in the graph. */
    public boolean contains(String node) {
        return node(Names.check(node)) != null;
    }

    /** What {@code node} uses (its dependencies), as a new set; empty for an unknown node. */
    public Set<String> dependencies(String node) {
        NodeRecord r = node(Names.check(node));
        return r == null ? new LinkedHashSet<>() : members(node, r.uses, USES);
    }

    /** What uses {@code node} (its dependents), as a new set; empty for an unknown node. */
    public Set<String> dependents(String node) {
        NodeRecord r = node(Names.check(node));
        return r == null ? new LinkedHashSet<>() : members(node, r.usedBy, USED_BY);
    }

    /**
     * The nodes of {@code changed} that are in the graph and every node that uses one of them,
     * directly or through others, each once and in dependency order: a node comes after every
     * node it uses. Unknown names are skipped. Rebuilding in this order never uses a stale input.
     */
    public List<String> affected(Collection<String> changed) {
        Map<String, Integer> level = new HashMap<>();
        ArrayDeque<String> todo = new ArrayDeque<>();
        for (String c : changed) {
            NodeRecord r = node(Names.check(c));
            if (r != null && level.putIfAbsent(c, r.level) == null) {
                todo.add(c);
            }
        }
        while (!todo.isEmpty()) {
            String x = todo.poll();
            for (String y : members(x, node(x).usedBy, USED_BY)) {
                NodeRecord ry = node(y);
                // No record: half an edge, a reader beside a commit that has yet to write y, or
                // a direct-mode crash during one. Nothing uses y that is not also reached so.
                if (ry != null && !level.containsKey(y)) {
                    level.put(y, ry.level);
                    todo.add(y);
                }
            }
        }
        // Levels rise along every edge, so sorting by level is a topological order; names break ties.
        List<String> out = new ArrayList<>(level.keySet());
        out.sort(Comparator.<String>comparingInt(level::get).thenComparing(Comparator.naturalOrder()));
        return out;
    }

    /** The level of {@code node}, or -1 if unknown (for checks). */
    int level(String node) {
        NodeRecord r = node(node);
        return r == null ? -1 : r.level;
    }

    // ------------------------------------------------------------------ changes

    /** Adds {@code node} without edges; false if it was there. */
    public boolean addNode(String node) {
        Names.check(node);
        return change(() -> {
            if (node(node) != null) {
                return false;
            }
            create(node);
            return true;
        });
    }

    /**
     * Adds the edge "{@code dependent} uses {@code dependency}", adding either node if missing;
     * false if the edge was there.
     *
     * @throws CycleException if {@code dependency} already uses {@code dependent}, directly or
     *     through others (or they are the same node)
     */
    public boolean addEdge(String dependency, String dependent) {
        Names.check(dependency);
        Names.check(dependent);
        return change(() -> link(dependency, dependent));
    }

    /** Removes the edge "{@code dependent} uses {@code dependency}"; false if it was not there. */
    public boolean removeEdge(String dependency, String dependent) {
        Names.check(dependency);
        Names.check(dependent);
        return change(() -> unlink(dependency, dependent));
    }

    /**
     * Makes {@code dependencies} exactly what {@code node} uses, adding and removing edges (and
     * adding nodes) as needed.
     *
     * @throws CycleException if a new edge would close a cycle
     */
    public void setDependencies(String node, Collection<String> dependencies) {
        Names.check(node);
        Set<String> want = new LinkedHashSet<>();
        for (String d : dependencies) {
            want.add(Names.check(d));
        }
        change(() -> {
            if (node(node) == null) {
                create(node);
            }
            NodeRecord r = node(node);
            for (String d : members(node, r.uses, USES)) {
                if (!want.contains(d)) {
                    unlink(d, node);
                }
            }
            for (String d : want) {
                link(d, node);
            }
            return null;
        });
    }

    /** Removes {@code node} and every edge into or out of it; false if it was not there. */
    public boolean removeNode(String node) {
        Names.check(node);
        return change(() -> {
            NodeRecord r = node(node);
            if (r == null) {
                return false;
            }
            for (String d : members(node, r.uses, USES)) {
                unlink(d, node);
            }
            for (String u : members(node, r.usedBy, USED_BY)) {
                unlink(node, u);
            }
            nodes.put(node, ABSENT);
            dirtyNodes.add(node);
            nodeDelta--;
            return true;
        });
    }

    private interface Change<T> {
        T run();
    }

    private <T> T change(Change<T> c) {
        if (unit == null) {
            throw new IllegalStateException("a read-only view of the graph cannot change it");
        }
        try {
            return c.run();
        } catch (RuntimeException e) {
            unit.fail(e);
            throw e;
        }
    }

    private void create(String node) {
        nodes.put(node, new NodeRecord());
        dirtyNodes.add(node);
        nodeDelta++;
    }

    /**
     * Adds the edge's halves that are missing. Each half is looked at on its own, and the levels
     * raised even for an edge already there: in direct mode a crash during a commit can leave one
     * half of an edge, or an edge without its raised levels, and publishing again must repair it
     * (it used to add both halves again, and count a member twice in a set that held it once). The
     * edge counts as added when its "used by" half was missing.
     */
    private boolean link(String dependency, String dependent) {
        if (dependency.equals(dependent)) {
            throw new CycleException(List.of(dependent, dependent));
        }
        if (node(dependency) == null) {
            create(dependency);
        }
        if (node(dependent) == null) {
            create(dependent);
        }
        NodeRecord d = node(dependency);
        NodeRecord u = node(dependent);
        boolean down = contains(dependency, d.usedBy, USED_BY, dependent);
        boolean up = contains(dependent, u.uses, USES, dependency);
        if (u.level <= d.level) {
            raise(dependency, dependent, d.level + 1);
        }
        if (!down) {
            add(dependency, d.usedBy, USED_BY, dependent);
            edgeDelta++;
        }
        if (!up) {
            add(dependent, u.uses, USES, dependency);
        }
        return !down || !up;
    }

    /** Removes the edge's halves that are there (see {@link #link}: a crash may have left one). */
    private boolean unlink(String dependency, String dependent) {
        NodeRecord d = node(dependency);
        NodeRecord u = node(dependent);
        boolean down = d != null && contains(dependency, d.usedBy, USED_BY, dependent);
        boolean up = u != null && contains(dependent, u.uses, USES, dependency);
        if (down) {
            remove(dependency, d.usedBy, USED_BY, dependent);
            edgeDelta--;
        }
        if (up) {
            remove(dependent, u.uses, USES, dependency);
        }
        return down || up;
    }

    /**
     * Before adding {@code dependency -> start}: lifts {@code start} to {@code level} and every
     * node that uses it, directly or not, above what it uses. Nodes are visited by rising old
     * level, so each is visited once, after everything that lifts it. Reaching {@code dependency}
     * means it already uses {@code start}: the edge would close a cycle, and no level has changed.
     */
    private void raise(String dependency, String start, int level) {
        Map<String, Integer> lifted = new HashMap<>();
        Map<String, String> liftedBy = new HashMap<>();
        PriorityQueue<Map.Entry<Integer, String>> todo = new PriorityQueue<>(Map.Entry.comparingByKey());
        Set<String> done = new HashSet<>();
        lifted.put(start, level);
        liftedBy.put(start, dependency);
        todo.add(Map.entry(node(start).level, start));
        while (!todo.isEmpty()) {
            String x = todo.poll().getValue();
            if (!done.add(x)) {
                continue;
            }
            int lx = lifted.get(x);
            for (String y : members(x, node(x).usedBy, USED_BY)) {
                if (y.equals(dependency)) {
                    throw new CycleException(cycle(dependency, x, liftedBy));
                }
                NodeRecord ry = node(y);
                if (ry == null) {
                    continue; // half an edge to a node without a record (see affected)
                }
                int ly = lifted.getOrDefault(y, ry.level);
                if (ly <= lx) {
                    lifted.put(y, lx + 1);
                    liftedBy.put(y, x);
                    todo.add(Map.entry(ry.level, y));
                }
            }
        }
        for (Map.Entry<String, Integer> e : lifted.entrySet()) {
            node(e.getKey()).level = e.getValue();
            dirtyNodes.add(e.getKey());
        }
    }

    /** {@code dependency} uses {@code last}, which uses what lifted it, ..., back to {@code dependency}. */
    private static List<String> cycle(String dependency, String last, Map<String, String> liftedBy) {
        List<String> c = new ArrayList<>();
        c.add(dependency);
        for (String x = last; !x.equals(dependency); x = liftedBy.get(x)) {
            c.add(x);
        }
        c.add(dependency);
        return c;
    }

    // ------------------------------------------------------------------ repair

    /** What {@link #repair} found and did: edges completed or lifted, edges dropped to break a cycle. */
    record Repair(long nodes, long edges, long halves, long levels, long dropped) {}

    /**
     * Makes the graph whole again after a direct-mode commit was cut part-way, which can leave any
     * subset of its record and bucket writes: an edge with one half only (the dependent's "uses"
     * without the dependency's "used by", or the reverse), a half naming a node without a record,
     * an edge whose levels do not rise (a lifted node's write lost), and counts that are off.
     *
     * <p>The rule: <b>a half stands for its edge</b>. Each half was written by a publish that asked
     * for that edge; a half alone is what is left either of that publish, cut, or of an
     * acknowledged edge whose removal was cut, or whose other half a cut bucket move lost. Keeping
     * the edge loses nothing acknowledged and invents nothing no publish asked for, while dropping
     * it could lose an acknowledged edge. So the missing half is added (and a missing node record
     * made), and levels are lifted so that they rise along every edge. Halves kept from two
     * states can close a cycle that neither state had: the edge whose re-adding closes it is then
     * dropped, the only case where a half is not kept.
     *
     * <p>Reads every record once, remembering only the defective edges: each is taken out, which
     * leaves whole edges with rising levels (a graph on which {@link #link} is sound), then added
     * back by {@link #link}, which checks for a cycle and lifts levels. The node and edge counts
     * are then set to what the graph holds.
     */
    Repair repair() {
        GraphEdit view = new GraphEdit(graph, null);
        Set<List<String>> lifted = new LinkedHashSet<>(); // whole edges whose levels do not rise
        Set<List<String>> halves = new LinkedHashSet<>(); // edges with one half
        long nodeRecords = 0;
        long whole = 0;
        for (Map.Entry<String, byte[]> e : graph.nodesMap().entrySet()) {
            String n = e.getKey();
            if (n.startsWith("\0")) {
                continue; // the counts record, the marker
            }
            nodeRecords++;
            NodeRecord r = NodeRecord.decode(n, e.getValue());
            for (String u : view.members(n, r.usedBy, USED_BY)) {
                NodeRecord ru = view.node(u);
                if (ru == null || !view.contains(u, ru.uses, USES, n)) {
                    halves.add(List.of(n, u));
                } else if (ru.level <= r.level) {
                    lifted.add(List.of(n, u));
                } else {
                    whole++;
                }
            }
            for (String d : view.members(n, r.uses, USES)) {
                NodeRecord rd = view.node(d);
                if (rd == null || !view.contains(d, rd.usedBy, USED_BY, n)) {
                    halves.add(List.of(d, n));
                }
            }
        }
        List<List<String>> defective = new ArrayList<>(lifted);
        defective.addAll(halves);
        for (List<String> e : defective) {
            unlink(e.get(0), e.get(1));
        }
        long added = 0;
        long dropped = 0;
        for (List<String> e : defective) {
            try {
                link(e.get(0), e.get(1));
                added++;
            } catch (CycleException c) {
                dropped++; // raise changed nothing; both nodes had records (a new node closes no cycle)
            }
        }
        long nodes = nodeRecords + nodeDelta;
        long edges = whole + added;
        long[] c = DependencyGraph.counts(read(graph.nodesMap(), DependencyGraph.COUNTS_KEY));
        nodeDelta = nodes - c[0];
        edgeDelta = edges - c[1];
        return new Repair(nodes, edges, halves.size(), lifted.size(), dropped);
    }

    // ------------------------------------------------------------------ edge sets

    private boolean contains(String node, NodeRecord.Side s, char side, String member) {
        return s.buckets == 0 ? s.inline.contains(member) : bucket(node, side, index(member, s.buckets)).contains(member);
    }

    private Set<String> members(String node, NodeRecord.Side s, char side) {
        if (s.buckets == 0) {
            return new LinkedHashSet<>(s.inline);
        }
        Set<String> all = new LinkedHashSet<>();
        for (int i = 0; i < s.buckets; i++) {
            all.addAll(bucket(node, side, i));
        }
        return all;
    }

    /**
     * Adds {@code member} to a side; the count moves only when the set changed. The count of a
     * side in buckets can still exceed its members after a direct-mode crash lost a bucket's
     * write: it is only a size hint there, made exact again when the side moves inline.
     */
    private void add(String node, NodeRecord.Side s, char side, String member) {
        if (s.buckets == 0) {
            if (!s.inline.add(member)) {
                return;
            }
            dirtyNodes.add(node);
            s.count = s.inline.size();
            if (s.count > DependencyGraph.INLINE_EDGES) {
                Set<String> all = new LinkedHashSet<>(s.inline);
                s.inline.clear();
                s.buckets = bucketsFor(all.size());
                place(node, side, s.buckets, all);
            }
            return;
        }
        int i = index(member, s.buckets);
        if (!bucket(node, side, i).add(member)) {
            return;
        }
        dirtyNodes.add(node);
        s.count++;
        dirtyBuckets.add(bucketKey(node, side, i));
        if (s.count > 2 * BUCKET_TARGET * s.buckets) {
            Set<String> all = members(node, s, side);
            s.buckets *= 2;
            place(node, side, s.buckets, all);
        }
    }

    /** Removes {@code member} from a side; the count moves only when the set changed (see {@link #add}). */
    private void remove(String node, NodeRecord.Side s, char side, String member) {
        if (s.buckets == 0) {
            if (s.inline.remove(member)) {
                dirtyNodes.add(node);
                s.count = s.inline.size();
            }
            return;
        }
        int i = index(member, s.buckets);
        if (!bucket(node, side, i).remove(member)) {
            return;
        }
        dirtyNodes.add(node);
        s.count--;
        dirtyBuckets.add(bucketKey(node, side, i));
        // Back inline at half the threshold, so that a set near it does not move at every change.
        if (s.count <= DependencyGraph.INLINE_EDGES / 2) {
            Set<String> all = members(node, s, side);
            place(node, side, s.buckets, Set.of());
            s.buckets = 0;
            s.inline.addAll(all);
            s.count = all.size();
        }
    }

    /** Empties buckets 0..n-1 of a side and puts {@code all} into them. */
    private void place(String node, char side, int n, Set<String> all) {
        for (int i = 0; i < n; i++) {
            String k = bucketKey(node, side, i);
            buckets.put(k, new LinkedHashSet<>());
            dirtyBuckets.add(k);
        }
        for (String m : all) {
            buckets.get(bucketKey(node, side, index(m, n))).add(m);
        }
    }

    private static int bucketsFor(int members) {
        int n = 2;
        while (n * BUCKET_TARGET < members) {
            n *= 2;
        }
        return n;
    }

    /** Bucket of {@code member} among {@code n} (a power of two); String.hashCode is fixed by the JLS. */
    static int index(String member, int n) {
        int h = member.hashCode() * 0x9E3779B9;
        return (h ^ (h >>> 16)) & (n - 1);
    }

    /** Key of a bucket in the edges map: node, NUL, side, bucket number. Names hold no NUL. */
    static String bucketKey(String node, char side, int i) {
        return node + '\0' + side + i;
    }

    private Set<String> bucket(String node, char side, int i) {
        String k = bucketKey(node, side, i);
        Set<String> b = buckets.get(k);
        if (b == null) {
            byte[] v = read(graph.edgesMap(), k);
            b = v == null ? new LinkedHashSet<>() : NodeRecord.decodeBucket(k, v);
            if (unit != null) {
                buckets.put(k, b);
            }
        }
        return b;
    }

    // ------------------------------------------------------------------ records

    /** The node's record, or null. A writable edit keeps what it read; a read-only view does not. */
    private NodeRecord node(String node) {
        NodeRecord r = nodes.get(node);
        if (r == null) {
            byte[] v = read(graph.nodesMap(), node);
            r = v == null ? ABSENT : NodeRecord.decode(node, v);
            if (unit != null) {
                nodes.put(node, r);
            }
        }
        return r == ABSENT ? null : r;
    }

    private byte[] read(HtodMap<String, byte[]> map, String key) {
        return unit == null ? map.get(key) : unit.get(map, key);
    }

    /** Moves the changed records into the unit; run when it commits. */
    void flush() {
        HtodMap<String, byte[]> nodeMap = graph.nodesMap();
        if (!dirtyNodes.isEmpty() || !dirtyBuckets.isEmpty()) {
            // Direct mode: a commit cut part-way can leave half an edge, which the cycle check
            // may not see; the marker has the next open repair the graph.
            unit.marker(nodeMap, DependencyGraph.CUT_KEY, new byte[] {1});
        }
        for (String n : dirtyNodes) {
            NodeRecord r = nodes.get(n);
            if (r == ABSENT) {
                unit.remove(nodeMap, n);
            } else {
                unit.put(nodeMap, n, r.encode());
            }
        }
        HtodMap<String, byte[]> edgeMap = graph.edgesMap();
        for (String k : dirtyBuckets) {
            Set<String> b = buckets.get(k);
            if (b.isEmpty()) {
                unit.remove(edgeMap, k);
            } else {
                unit.put(edgeMap, k, NodeRecord.encodeBucket(b));
            }
        }
        if (nodeDelta != 0 || edgeDelta != 0) {
            long[] c = DependencyGraph.counts(unit.get(nodeMap, DependencyGraph.COUNTS_KEY));
            unit.put(nodeMap, DependencyGraph.COUNTS_KEY, ByteBuffer.allocate(16).putLong(c[0] + nodeDelta)
                    .putLong(c[1] + edgeDelta).array());
        }
        dirtyNodes.clear();
        dirtyBuckets.clear();
        nodeDelta = 0;
        edgeDelta = 0;
        // Records stay cached: the unit now holds their latest bytes, and the cache agrees with them.
    }
}
