package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.core.CorruptStoreException;
import org.htod.core.container.Container;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A superblock, its checksum right, naming a checkpoint longer than the device (written so by a
 * defect, or by hand): the open refuses it as damage, with where, before it makes a buffer of that
 * size. It used to make the buffer first: an {@code IllegalArgumentException} for a length past
 * what an int holds, an attempt at gigabytes of memory below that.
 */
class CheckpointBoundsTest {
    @Test
    void aCheckpointLongerThanTheDeviceIsRefusedAsDamage() {
        MemoryDevice disk = new MemoryDevice();
        HtodStore s = Htod.builder(disk).grain(64).logSize(1 << 20).durability(Durability.SYNC).open();
        MemoryDevice crashed;
        try {
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            m.put("k", "v");
            s.checkpoint();
            crashed = LogStores.copy(disk); // as a crash leaves it: the log active, the checkpoint named
        } finally {
            LogStores.closeQuietly(s);
        }
        Container c = Container.open(crashed);
        c.update(sb -> sb.withSnapshot(sb.snapshotOffset(), 3L << 30) /* within the container, past the device */);
        CorruptStoreException e = assertThrows(CorruptStoreException.class,
                () -> Htod.builder(crashed).grain(64).logSize(1 << 20).open());
        assertTrue(e.getMessage().contains("runs past the device's end"), e.getMessage());
    }
}
