package org.htod.infinispan.bench;

import java.nio.file.Path;
import org.htod.Durability;
import org.htod.infinispan.HtodStoreConfigurationBuilder;
import org.infinispan.configuration.cache.PersistenceConfigurationBuilder;
import org.infinispan.persistence.rocksdb.configuration.RocksDBStoreConfigurationBuilder;

/** The stores compared, each configured as its documentation recommends, at two durabilities. */
public enum Rival {
    /** htod: durable is {@link Durability#SYNC} (each write synced before it returns); else ASYNC every 200 ms. */
    HTOD {
        @Override
        void configure(PersistenceConfigurationBuilder p, Path dir, boolean durable) {
            p.addStore(HtodStoreConfigurationBuilder.class)
                    .location(dir.resolve("htod").toString())
                    .durability(durable ? Durability.SYNC : Durability.ASYNC)
                    .syncInterval(200);
        }
    },
    /** SoftIndexFileStore, Infinispan's default file store: durable is syncWrites(true); its default is false. */
    SIFS {
        @Override
        void configure(PersistenceConfigurationBuilder p, Path dir, boolean durable) {
            p.addSoftIndexFileStore()
                    .dataLocation(dir.resolve("sifs-data").toString())
                    .indexLocation(dir.resolve("sifs-index").toString())
                    .syncWrites(durable);
        }
    },
    /**
     * Infinispan's RocksDB store: writes go through RocksDB's write-ahead log, which it never syncs
     * per write (the store has no option for it), so "durable" is the same as not: a write survives
     * the process being killed, not the machine losing power.
     */
    ROCKSDB {
        @Override
        void configure(PersistenceConfigurationBuilder p, Path dir, boolean durable) {
            p.addStore(RocksDBStoreConfigurationBuilder.class)
                    .location(dir.resolve("rocksdb-data").toString())
                    .expiredLocation(dir.resolve("rocksdb-expired").toString());
        }
    };

    abstract void configure(PersistenceConfigurationBuilder p, Path dir, boolean durable);
}
