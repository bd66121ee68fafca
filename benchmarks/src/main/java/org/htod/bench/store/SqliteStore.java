package org.htod.bench.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * SQLite through the xerial JDBC driver: one database file {@code kv.db} in WAL journal mode, one
 * table, prepared statements, one connection.
 *
 * <p>The table is {@code kv(k BLOB PRIMARY KEY, v BLOB)} <em>with</em> a rowid. SQLite's own
 * advice ("Clustered Indexes and the WITHOUT ROWID Optimization") is that WITHOUT ROWID tables
 * work best when a row is smaller than about a twentieth of a page (some 200 bytes at the default
 * 4 KiB page); the paper's objects are kilobytes to megabytes, so the rows stay in a rowid table
 * and the key goes in the primary-key index beside it. A put is an upsert ({@code INSERT ... ON
 * CONFLICT(k) DO UPDATE}), which keeps the row's rowid, unlike {@code INSERT OR REPLACE}.
 *
 * <p>Durability: at {@link Durability#SYNC}, {@code PRAGMA synchronous=FULL} and autocommit, so
 * each put is its own transaction and in WAL mode SQLite syncs the WAL on every commit. A batch is
 * one transaction, one sync. At {@link Durability#NONE}, {@code PRAGMA synchronous=OFF}: SQLite
 * never syncs, and a commit only hands the WAL pages to the operating system.
 *
 * <p>Gets may come from many threads at once ({@code ConcurrentReadBenchmark}): each thread reads
 * through a connection of its own, opened on its first get, as SQLite wants concurrent readers to
 * (in WAL mode they do not block one another or the writer); a JDBC statement shared by threads
 * would mix up their keys and results. Every write and iteration goes through the one writing
 * connection.
 */
final class SqliteStore implements KeyValueStore {

    static final String NAME = "sqlite";

    private final Path dir;
    private final Durability durability;
    private final Connection conn;
    private final PreparedStatement put;
    /** Each reading thread's connection and its prepared get. */
    private final ThreadLocal<Reader> readers = ThreadLocal.withInitial(this::openReader);
    /** Every reader opened, closed with the store. */
    private final ConcurrentLinkedQueue<Reader> openReaders = new ConcurrentLinkedQueue<>();
    private final PreparedStatement remove;
    private boolean closed;

    SqliteStore(Path dir, Durability durability) {
        this.dir = dir;
        this.durability = durability;
        try {
            conn = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("kv.db"));
            try (Statement st = conn.createStatement()) {
                st.execute("PRAGMA journal_mode=WAL");
                st.execute(durability == Durability.SYNC ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF");
                st.execute("CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL)");
            }
            conn.setAutoCommit(true);
            put = conn.prepareStatement("INSERT INTO kv (k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v");
            remove = conn.prepareStatement("DELETE FROM kv WHERE k = ?");
        } catch (SQLException e) {
            throw new StoreException(NAME + ": cannot open " + dir.resolve("kv.db"), e);
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Durability durability() {
        return durability;
    }

    @Override
    public void put(byte[] key, byte[] value) {
        try {
            put.setBytes(1, key);
            put.setBytes(2, value);
            put.executeUpdate();
        } catch (SQLException e) {
            throw new StoreException(NAME + ": put of a " + value.length + " B value failed", e);
        }
    }

    @Override
    public void putBatch(List<byte[]> keys, List<byte[]> values) {
        if (keys.size() != values.size()) {
            throw new IllegalArgumentException("batch has " + keys.size() + " keys but " + values.size() + " values");
        }
        try {
            conn.setAutoCommit(false);
            try {
                for (int i = 0; i < keys.size(); i++) {
                    put.setBytes(1, keys.get(i));
                    put.setBytes(2, values.get(i));
                    put.executeUpdate();
                }
                conn.commit();
            } catch (SQLException e) {
                conn.rollback();
                throw e;
            } finally {
                conn.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw new StoreException(NAME + ": batch of " + keys.size() + " puts failed", e);
        }
    }

    /** A reading thread's own connection to the database, and its prepared get. */
    private record Reader(Connection conn, PreparedStatement get) {}

    private Reader openReader() {
        if (closed) {
            throw new StoreException(NAME + ": get after close");
        }
        try {
            Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("kv.db"));
            Reader r = new Reader(c, c.prepareStatement("SELECT v FROM kv WHERE k = ?"));
            openReaders.add(r);
            return r;
        } catch (SQLException e) {
            throw new StoreException(NAME + ": cannot open a reading connection to " + dir.resolve("kv.db"), e);
        }
    }

    @Override
    public byte[] get(byte[] key) {
        PreparedStatement get = readers.get().get();
        try {
            get.setBytes(1, key);
            try (ResultSet rs = get.executeQuery()) {
                return rs.next() ? rs.getBytes(1) : null;
            }
        } catch (SQLException e) {
            throw new StoreException(NAME + ": get failed", e);
        }
    }

    @Override
    public boolean remove(byte[] key) {
        try {
            remove.setBytes(1, key);
            return remove.executeUpdate() > 0;
        } catch (SQLException e) {
            throw new StoreException(NAME + ": remove failed", e);
        }
    }

    @Override
    public void forEachKey(Consumer<byte[]> action) {
        scan("SELECT k FROM kv", rs -> action.accept(rs.getBytes(1)));
    }

    @Override
    public void forEachValue(Consumer<byte[]> action) {
        scan("SELECT v FROM kv", rs -> action.accept(rs.getBytes(1)));
    }

    @Override
    public void forEachEntry(BiConsumer<byte[], byte[]> action) {
        scan("SELECT k, v FROM kv", rs -> action.accept(rs.getBytes(1), rs.getBytes(2)));
    }

    private interface Row {
        void accept(ResultSet rs) throws SQLException;
    }

    private void scan(String sql, Row row) {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                row.accept(rs);
            }
        } catch (SQLException e) {
            throw new StoreException(NAME + ": " + sql + " failed", e);
        }
    }

    /** Every put has committed already (autocommit); nothing is left in the process. */
    @Override
    public void flush() {}

    /** The write-ahead log copied into the database file and emptied ({@code wal_checkpoint(TRUNCATE)}). */
    @Override
    public void finishDeferred() {
        try (Statement st = conn.createStatement()) {
            st.execute("PRAGMA wal_checkpoint(TRUNCATE)");
        } catch (SQLException e) {
            throw new StoreException(NAME + ": WAL checkpoint failed", e);
        }
    }

    /** Bytes of the write-ahead log ({@code kv.db-wal}) not yet checkpointed into the database. */
    @Override
    public Map<String, Long> pending() {
        Path wal = dir.resolve("kv.db-wal");
        try {
            return Map.of("walBytes", Files.exists(wal) ? Files.size(wal) : 0L);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the size of " + wal, e);
        }
    }

    @Override
    public long diskBytes() {
        return DiskUsage.apparentBytes(dir);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (Reader r; (r = openReaders.poll()) != null;) {
                r.get().close();
                r.conn().close();
            }
            put.close();
            remove.close();
            conn.close();
        } catch (SQLException e) {
            throw new StoreException(NAME + ": close failed", e);
        }
    }
}
