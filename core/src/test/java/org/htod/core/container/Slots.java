package org.htod.core.container;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.MemoryDevice;

/** Reading, crafting and copying superblock slots in tests. */
final class Slots {
    static final long A = Superblock.SLOT_A_OFFSET;
    static final long B = Superblock.SLOT_B_OFFSET;

    private Slots() {}

    /** The 4096 bytes of the slot at {@code offset}. */
    static ByteBuffer read(BlockDevice dev, long offset) {
        ByteBuffer b = ByteBuffer.allocate(Superblock.SLOT_SIZE);
        dev.read(offset, b);
        return b.flip();
    }

    static byte[] bytes(BlockDevice dev, long offset, int length) {
        ByteBuffer b = ByteBuffer.allocate(length);
        dev.read(offset, b);
        return b.array();
    }

    static void write(BlockDevice dev, long offset, ByteBuffer slot) {
        dev.write(offset, slot.duplicate().position(0).limit(Superblock.SLOT_SIZE));
    }

    /** Recomputes the CRC32C of a slot for its stated record length, as a writer of that length would. */
    static ByteBuffer reseal(ByteBuffer slot) {
        int length = slot.getInt(Superblock.RECORD_LENGTH_OFFSET);
        CRC32C crc = new CRC32C();
        crc.update(slot.slice(0, length - 4));
        slot.putInt(length - 4, (int) crc.getValue());
        return slot;
    }

    /** Flips one bit of the byte at {@code index} of the slot at {@code offset}. */
    static void flipBit(BlockDevice dev, long offset, int index) {
        ByteBuffer one = ByteBuffer.allocate(1);
        dev.read(offset + index, one);
        one.put(0, (byte) (one.get(0) ^ 0x10)).clear();
        dev.write(offset + index, one);
    }

    /** A copy of a device's bytes on a new memory device of the given capacity. */
    static MemoryDevice copy(BlockDevice from, long capacity) {
        MemoryDevice to = new MemoryDevice(capacity, from.sectorSize());
        long size = from.size();
        ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
        for (long pos = 0; pos < size; pos += buf.capacity()) {
            buf.clear().limit((int) Math.min(buf.capacity(), size - pos));
            from.read(pos, buf);
            to.write(pos, buf.flip());
        }
        return to;
    }
}
