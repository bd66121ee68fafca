package org.htod;

import org.htod.mob.WriteLayer;

/**
 * What the write layer's tests (in {@code org.htod.mob}) need of this package beyond the public
 * API: a store's write layer, whose counters they read, and the builder's tuning for tests.
 */
public final class LayerAccess {
    private LayerAccess() {}

    /** The write layer of a store opened in log mode. */
    public static WriteLayer layer(HtodStore store) {
        WriteLayer l = store.layer();
        if (l == null) {
            throw new IllegalArgumentException(store + " is in direct mode: it has no write layer");
        }
        return l;
    }

    /** The most keys one install of the write layer takes. */
    public static Htod.Builder installBatch(Htod.Builder b, int keys) {
        return b.installBatch(keys);
    }

    /**
     * Hash keys of the store's new tables from a generator seeded with {@code seed}, so that a
     * random test's seed replays its buckets too, not only its operations (a seed of 0 counts as
     * 1: the builder takes 0 for keys drawn at random).
     */
    public static Htod.Builder hashKeySeed(Htod.Builder b, long seed) {
        return b.hashKeySeed(seed != 0 ? seed : 1);
    }

    /** The fewest buckets one step of a doubling moves (and the direct mode's pending links). */
    public static Htod.Builder doublingMinBatch(Htod.Builder b, int buckets) {
        return b.tuning(org.htod.table.TableOptions.DEFAULT_MAX_PENDING_LINKS, buckets);
    }
}
