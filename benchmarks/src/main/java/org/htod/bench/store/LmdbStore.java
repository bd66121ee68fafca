package org.htod.bench.store;

import static java.nio.ByteBuffer.allocateDirect;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.lmdbjava.CursorIterable;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.LmdbException;
import org.lmdbjava.Txn;

/**
 * LMDB through lmdbjava with direct {@code ByteBuffer}s: one environment in the store directory
 * ({@code data.mdb}, {@code lock.mdb}), one named database, a 64 GiB map (address space only: the
 * file grows with the data) and the default flags. Keys are at most 511 bytes (LMDB's default
 * {@code MDB_MAXKEYSIZE}). A put reserves the value's space inside the map ({@code MDB_RESERVE})
 * and copies the value there, so values need no direct buffer of their own. Gets may come from
 * many threads at once: each has its own read transaction and key buffer. On Java 17 the JVM
 * needs {@code --add-opens} for {@code java.nio} and {@code sun.nio.ch} ({@link Stores#JVM_FLAGS}).
 *
 * <p>Durability: one write transaction per put (one per batch). At {@link Durability#SYNC} the
 * environment has LMDB's default flags, so a commit syncs the data and the meta page before it
 * returns. At {@link Durability#NONE} it is opened with {@code MDB_NOSYNC | MDB_NOMETASYNC}: a
 * commit writes to the operating system without syncing; LMDB keeps the database consistent after
 * a crash but may lose the last transactions.
 */
final class LmdbStore implements KeyValueStore {

    static final String NAME = "lmdb";

    static final long MAP_SIZE = 64L << 30;
    static final int MAX_KEY = 511;

    private final Path dir;
    private final Durability durability;
    private final Env<ByteBuffer> env;
    private final Dbi<ByteBuffer> db;
    /**
     * Each thread's buffer for the key of its call: gets may come from many threads at once
     * ({@code ConcurrentReadBenchmark}), and a buffer shared by them would be refilled by one
     * thread while LMDB reads it for another, finding the wrong object or failing.
     */
    private final ThreadLocal<ByteBuffer> keyBufs = ThreadLocal.withInitial(() -> allocateDirect(MAX_KEY));
    private boolean closed;

    LmdbStore(Path dir, Durability durability) {
        this.dir = dir;
        this.durability = durability;
        EnvFlags[] flags = durability == Durability.SYNC
                ? new EnvFlags[0]
                : new EnvFlags[] {EnvFlags.MDB_NOSYNC, EnvFlags.MDB_NOMETASYNC};
        try {
            env = Env.create().setMapSize(MAP_SIZE).setMaxDbs(1).open(dir.toFile(), flags);
            db = env.openDbi("kv", DbiFlags.MDB_CREATE);
        } catch (LmdbException e) {
            throw new StoreException(NAME + ": cannot open " + dir, e);
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
        try (Txn<ByteBuffer> txn = env.txnWrite()) {
            reserveAndCopy(txn, key, value);
            txn.commit();
        } catch (LmdbException e) {
            throw new StoreException(NAME + ": put of a " + value.length + " B value failed", e);
        }
    }

    @Override
    public void putBatch(List<byte[]> keys, List<byte[]> values) {
        if (keys.size() != values.size()) {
            throw new IllegalArgumentException("batch has " + keys.size() + " keys but " + values.size() + " values");
        }
        try (Txn<ByteBuffer> txn = env.txnWrite()) {
            for (int i = 0; i < keys.size(); i++) {
                reserveAndCopy(txn, keys.get(i), values.get(i));
            }
            txn.commit();
        } catch (LmdbException e) {
            throw new StoreException(NAME + ": batch of " + keys.size() + " puts failed", e);
        }
    }

    private void reserveAndCopy(Txn<ByteBuffer> txn, byte[] key, byte[] value) {
        ByteBuffer slot = db.reserve(txn, key(key), value.length);
        slot.put(value);
    }

    @Override
    public byte[] get(byte[] key) {
        try (Txn<ByteBuffer> txn = env.txnRead()) {
            ByteBuffer v = db.get(txn, key(key));
            return v == null ? null : bytes(v);
        } catch (LmdbException e) {
            throw new StoreException(NAME + ": get failed", e);
        }
    }

    @Override
    public boolean remove(byte[] key) {
        try (Txn<ByteBuffer> txn = env.txnWrite()) {
            boolean removed = db.delete(txn, key(key));
            txn.commit();
            return removed;
        } catch (LmdbException e) {
            throw new StoreException(NAME + ": remove failed", e);
        }
    }

    @Override
    public void forEachKey(Consumer<byte[]> action) {
        scan((k, v) -> action.accept(bytes(k)));
    }

    @Override
    public void forEachValue(Consumer<byte[]> action) {
        scan((k, v) -> action.accept(bytes(v)));
    }

    @Override
    public void forEachEntry(BiConsumer<byte[], byte[]> action) {
        scan((k, v) -> action.accept(bytes(k), bytes(v)));
    }

    private void scan(BiConsumer<ByteBuffer, ByteBuffer> visitor) {
        try (Txn<ByteBuffer> txn = env.txnRead(); CursorIterable<ByteBuffer> it = db.iterate(txn)) {
            for (CursorIterable.KeyVal<ByteBuffer> kv : it) {
                visitor.accept(kv.key(), kv.val());
            }
        } catch (LmdbException e) {
            throw new StoreException(NAME + ": iteration failed", e);
        }
    }

    /** Commits have written everything to the OS; at SYNC they synced it as well. */
    @Override
    public void flush() {}

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
        db.close();
        env.close();
    }

    private ByteBuffer key(byte[] key) {
        if (key.length == 0 || key.length > MAX_KEY) {
            throw new StoreException(NAME + ": keys are 1 to " + MAX_KEY + " bytes, got " + key.length);
        }
        ByteBuffer keyBuf = keyBufs.get();
        keyBuf.clear();
        keyBuf.put(key).flip();
        return keyBuf;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}
