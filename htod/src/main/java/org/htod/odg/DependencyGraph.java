package org.htod.odg;

import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.htod.Codec;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.HtodException;

/**
 * An object dependence graph (ODG) on disk: which nodes (pages, composites, fragments) use which,
 * kept in two maps of one store, {@code <name>.nodes} and {@code <name>.edges}. It is acyclic: an
 * edge that would close a cycle is refused with a {@link CycleException} that names the cycle.
 * {@link #affected} answers "what must be rebuilt when these change", in dependency order.
 *
 * <p>A node's record holds its level and both its edge sets (what it uses, what uses it). An
 * edge set of more than {@link #INLINE_EDGES} members moves out of the record into buckets of
 * the edges map, hashed by member name, so that adding an edge to a node used by ten thousand
 * others rewrites one bucket of a few dozen names rather than a record of ten thousand. Levels
 * rise along every edge ({@code level(dependency) < level(dependent)}), which makes the cycle
 * check free for edges that already go upwards and gives {@link #affected} its order.
 *
 * <p>Every change goes through a {@link WriteUnit}: {@link #edit(WriteUnit)} to combine graph
 * changes with other writes, or the single-change methods here, each its own unit. Edits of one
 * graph are serialized by its edit lock (held from {@code edit} until the unit closes); reads
 * take no lock and see each record as last written. The lock belongs to this object: open one
 * {@code DependencyGraph} per graph and store, and share it between threads.
 */
public final class DependencyGraph {
    /** Members an edge set holds inline in its node's record; larger sets live in the edges map. */
    public static final int INLINE_EDGES = 50;
    /** Key of the counts record in the nodes map; no node name starts with NUL. */
    static final String COUNTS_KEY = "\0counts";
    /**
     * Key of the marker in the nodes map, there while a direct-mode commit that writes the graph
     * may be cut part-way (see {@link WriteUnit#marker}); found at {@link #open}, the graph is
     * repaired (see {@link GraphEdit#repair}).
     */
    static final String CUT_KEY = "\0cut";

    private final HtodStore store;
    private final String name;
    private final HtodMap<String, byte[]> nodes;
    private final HtodMap<String, byte[]> edges;
    /** Held by the thread whose unit is editing this graph, from edit() until the unit closes. */
    private final ReentrantLock editLock = new ReentrantLock();

    private DependencyGraph(HtodStore store, String name) {
        this.store = store;
        this.name = name;
        this.nodes = store.map(name + ".nodes", Codec.string(), Codec.bytes());
        this.edges = store.map(name + ".edges", Codec.string(), Codec.bytes());
    }

    /** The graph called {@code name} in {@code store}, created empty if absent. */
    public static DependencyGraph open(HtodStore store, String name) {
        Objects.requireNonNull(store, "store");
        if (Objects.requireNonNull(name, "name").isEmpty()) {
            throw new IllegalArgumentException("a graph name must not be empty");
        }
        DependencyGraph g = new DependencyGraph(store, name);
        if (!store.isReadOnly() && g.nodes.containsKey(CUT_KEY)) {
            g.repair();
        }
        return g;
    }

    /**
     * Repairs what a cut direct-mode commit can leave (see {@link GraphEdit#repair}), then removes
     * the marker that said so; a crash during the repair leaves the marker, and the next open
     * repairs again.
     */
    GraphEdit.Repair repair() {
        GraphEdit.Repair done;
        try (WriteUnit u = new WriteUnit(store)) {
            done = edit(u).repair();
            u.commit();
        }
        nodes.remove(CUT_KEY); // after the repair's sync; if the repair wrote, its commit removed it already
        return done;
    }

    public String name() {
        return name;
    }

    /**
     * An edit of this graph inside {@code unit}; the same edit for every call with one unit. Takes
     * the graph's edit lock (waiting for another unit's edit to close) and holds it until {@code
     * unit} is closed.
     *
     * @throws IllegalArgumentException if {@code unit} is over another store
     */
    public GraphEdit edit(WriteUnit unit) {
        if (unit.store() != store) {
            throw new IllegalArgumentException("the write unit is over another store than graph '" + name + "'");
        }
        return unit.attachment(this, () -> {
            editLock.lock();
            unit.onClose(editLock::unlock);
            GraphEdit e = new GraphEdit(this, unit);
            unit.beforeCommit(e::flush);
            return e;
        });
    }

    private GraphEdit view() {
        return new GraphEdit(this, null);
    }

    /** Whether {@code node} is in the graph. */
    public boolean contains(String node) {
        return view().contains(node);
    }

    /** What {@code node} uses; empty for an unknown node. */
    public Set<String> dependencies(String node) {
        return view().dependencies(node);
    }

    /** What uses {@code node}; empty for an unknown node. */
    public Set<String> dependents(String node) {
        return view().dependents(node);
    }

    /** See {@link GraphEdit#affected}. */
    public List<String> affected(Collection<String> changed) {
        return view().affected(changed);
    }

    public long nodeCount() {
        return counts(nodes.get(COUNTS_KEY))[0];
    }

    public long edgeCount() {
        return counts(nodes.get(COUNTS_KEY))[1];
    }

    /** Adds a node without edges, in a unit of its own; false if it was there. */
    public boolean addNode(String node) {
        return change(e -> e.addNode(node));
    }

    /** See {@link GraphEdit#addEdge}; in a unit of its own. */
    public boolean addEdge(String dependency, String dependent) {
        return change(e -> e.addEdge(dependency, dependent));
    }

    /** See {@link GraphEdit#removeEdge}; in a unit of its own. */
    public boolean removeEdge(String dependency, String dependent) {
        return change(e -> e.removeEdge(dependency, dependent));
    }

    /** See {@link GraphEdit#setDependencies}; in a unit of its own. */
    public void setDependencies(String node, Collection<String> dependencies) {
        change(e -> {
            e.setDependencies(node, dependencies);
            return null;
        });
    }

    /** See {@link GraphEdit#removeNode}; in a unit of its own. */
    public boolean removeNode(String node) {
        return change(e -> e.removeNode(node));
    }

    private <T> T change(Function<GraphEdit, T> f) {
        try (WriteUnit u = new WriteUnit(store)) {
            T t = f.apply(edit(u));
            u.commit();
            return t;
        }
    }

    HtodStore store() {
        return store;
    }

    HtodMap<String, byte[]> nodesMap() {
        return nodes;
    }

    HtodMap<String, byte[]> edgesMap() {
        return edges;
    }

    /** Nodes and edges from the counts record's bytes (16: two longs), zeros if absent. */
    static long[] counts(byte[] v) {
        if (v == null) {
            return new long[2];
        }
        // Checked before use: a short record threw BufferUnderflowException from nodeCount().
        ByteBuffer b = ByteBuffer.wrap(v);
        long[] c = v.length == 16 ? new long[] {b.getLong(), b.getLong()} : null;
        if (c == null || c[0] < 0 || c[1] < 0) {
            throw new HtodException("graph counts record: " + (c == null ? v.length + " bytes, not 16"
                    : c[0] + " nodes and " + c[1] + " edges, a count below 0"));
        }
        return c;
    }

    @Override
    public String toString() {
        return "DependencyGraph[" + name + ", " + nodeCount() + " nodes, " + edgeCount() + " edges]";
    }
}
