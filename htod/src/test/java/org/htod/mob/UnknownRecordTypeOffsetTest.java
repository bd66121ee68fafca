package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.core.CorruptStoreException;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A log record whose CRC matches but whose type is unknown is refused, and the error's offset is
 * where the record lies on the device (it was {@code logOffset + lsn % logSize}, a stream position
 * taken for device bytes, the frame headers and the lap ignored): {@code logOffset + 512 f + 24 + p mod 488} for stream
 * position p in frame f (docs/FORMAT.md, "Positions and laps").
 */
class UnknownRecordTypeOffsetTest {
    private static final int LOG_SIZE = 1 << 20;
    private static final long LOG_OFFSET = 8192;

    @Test
    void anUnknownTypeNamesTheRecordsDeviceOffset() {
        MemoryDevice disk = null;
        for (int attempt = 0; attempt < 20 && disk == null; attempt++) {
            MemoryDevice d = new MemoryDevice();
            CrashDevice crash = new CrashDevice(d);
            HtodStore s = Htod.builder(crash).grain(64).logSize(LOG_SIZE).durability(Durability.NONE).open();
            s.map("m", Codec.string(), Codec.string());
            s.sync();
            WriteLayer layer = LogStores.layer(s);
            long checkpoints = layer.stats().checkpoints;
            // Enough records first that the unknown one lies past the first frame.
            for (int i = 0; i < 40; i++) {
                layer.log.append(0, ByteBuffer.allocate(64));
            }
            layer.log.append(9, ByteBuffer.allocate(16));
            layer.log.sync();
            boolean moved = layer.stats().checkpoints != checkpoints;
            crash.crashKeeping(at -> false);
            LogStores.closeQuietly(s);
            if (!moved) {
                disk = d;
            }
        }
        MemoryDevice crashed = disk;
        CorruptStoreException e = assertThrows(CorruptStoreException.class,
                () -> Htod.builder(crashed.reopen()).open().close());
        Matcher m = Pattern.compile("unknown type 9 at position (\\d+)").matcher(e.getMessage());
        if (!m.find()) {
            throw new AssertionError(e.getMessage());
        }
        long p = Long.parseLong(m.group(1));
        long lap = LOG_SIZE / 512 * 488L;
        long expected = LOG_OFFSET + (p % lap) / 488 * 512 + 24 + p % 488;
        assertEquals(expected, e.offset(), e.getMessage());
    }
}
