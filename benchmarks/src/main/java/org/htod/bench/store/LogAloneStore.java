package org.htod.bench.store;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.htod.core.container.ContainerConfig;
import org.htod.core.device.CountingDevice;
import org.htod.core.device.FileDevice;
import org.htod.core.device.IoCounts;
import org.htod.core.log.Log;

/**
 * Not a store: htod's log alone, to split what a durable put in log mode costs into the log's
 * share and the rest (the write buffer, the flusher's installs into the table, checkpoints).
 * Each put appends one record of the bytes a put's data record holds (its key and value, with the
 * record's 37 bytes of operation header) to a {@link Log} over a region of the store's default
 * log size, and returns once a group commit has made it durable, as a log-mode put at {@code
 * SYNC} does; nothing else is written. The region is formatted (blank frames, synced) when it
 * opens, as a store's log region is after its first lap, and space is released as soon as it is
 * durable, since no install needs it. It is a {@link DurableProbe}: nothing can be read back.
 */
final class LogAloneStore extends DurableProbe {
    static final String NAME = "htod-log-alone";
    /** The bytes a data record of one put adds to its key and value (see {@code DataRecord}). */
    static final int OP_HEADER = 4 + 1 + 8 + 4 + 8 + 8 + 4;
    static final long REGION_OFFSET = 4096;
    private static final int RECORD_TYPE = 1;

    private final CountingDevice device;
    private final Log log;
    private final long releaseAt;
    /** The device's counts once the region is formatted: {@link #ioSummary} counts from there. */
    private final IoCounts opened;

    LogAloneStore(Path dir) {
        super(NAME, "the log's writes");
        long region = ContainerConfig.DEFAULT_LOG_SIZE;
        device = new CountingDevice(FileDevice.open(dir.resolve("log.region")), false); // no seek distance: see HtodKeyValueStore
        try {
            Log.format(device, REGION_OFFSET, region);
            log = new Log(device, REGION_OFFSET, region, 0, 0, 1);
            log.prepare();
        } catch (RuntimeException e) {
            device.close();
            throw e;
        }
        releaseAt = log.regionSize() / 4;
        opened = device.counts();
    }

    @Override
    public void put(byte[] key, byte[] value) {
        ByteBuffer payload = ByteBuffer.allocate(OP_HEADER + key.length + value.length);
        payload.putInt(1).put((byte) 1).putLong(0).putInt(key.length).put(key).putLong(0).putLong(0)
                .putInt(value.length).put(value).flip();
        log.awaitDurable(log.append(RECORD_TYPE, payload));
        if (log.used() > releaseAt) {
            release();
        }
    }

    /** Gives back everything durable; one thread at a time, so that no release goes behind another's. */
    private synchronized void release() {
        long durable = log.durable();
        if (durable > log.start()) {
            log.release(durable);
        }
    }

    /**
     * What the device did since the region was formatted: syncs, writes, bytes written, group
     * commits and the records they carried.
     */
    String ioSummary(long puts) {
        return DurableStores.ioLine(puts, device.counts().minus(opened), log.groupCounts());
    }

    @Override
    public long diskBytes() {
        return REGION_OFFSET + ContainerConfig.DEFAULT_LOG_SIZE;
    }

    @Override
    public void close() {
        try {
            log.close();
        } finally {
            device.close();
        }
    }
}
