package org.htod.core.container;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.zip.CRC32C;
import org.htod.core.CorruptStoreException;
import org.htod.core.IncompatibleFormatException;
import org.htod.core.NotAStoreException;

/**
 * The record at the start of a container that says what the container is and where everything
 * in it lives. Two copies are kept, in slot A (offset 0) and slot B (offset 4096), both written by
 * every update, one after the other; see {@link Container} for the write and selection rules and
 * {@code docs/FORMAT.md} for the specification.
 *
 * <p>A value of this class is immutable and always valid: the constructor checks every invariant
 * the decoder checks, so an encoded superblock always decodes to an equal one. Derive a changed
 * copy with the {@code with...} methods; the sequence number is assigned by {@link Container}.
 *
 * @param sequence number of this update, from 1
 * @param storeId random at creation, never 0; tells this store's bytes from a previous store's
 * @param createdMillis creation time, milliseconds since the epoch
 * @param sectorSize sector size of the device at creation (512 to 4096, a power of two)
 * @param logOffset absolute offset of the log region, always {@value #LOG_OFFSET}
 * @param logSize bytes of the log region, a multiple of 4096, possibly 0
 * @param heapOffset absolute offset of the heap region, {@code logOffset + logSize}
 * @param heapCapacity bytes the heap may grow to
 * @param storageMethod how the heap records allocation status
 * @param clean true when the store was shut down cleanly and nothing needs recovery
 * @param grain allocation unit of the heap in bytes
 * @param maxQuickList number of quick lists (maxQL)
 * @param acceptableWaste bytes a block may exceed a request by before it is split (w)
 * @param obaThreshold smallest free block batch allocation places objects into (T)
 * @param snapshotOffset absolute offset of the clean-shutdown snapshot, 0 if none
 * @param snapshotLength bytes of the snapshot, 0 if none
 * @param rootCatalog absolute offset of the root catalog block, 0 if none
 * @param checkpointStamp opaque value kept for the allocator
 * @param log where the log stands: see {@link LogState}
 */
public record Superblock(
        long sequence,
        long storeId,
        long createdMillis,
        int sectorSize,
        long logOffset,
        long logSize,
        long heapOffset,
        long heapCapacity,
        StorageMethod storageMethod,
        boolean clean,
        int grain,
        int maxQuickList,
        int acceptableWaste,
        int obaThreshold,
        long snapshotOffset,
        long snapshotLength,
        long rootCatalog,
        long checkpointStamp,
        LogState log) {

    /**
     * Where the log region stands, as of the last checkpoint.
     *
     * @param epoch number of the opening that wrote the records from {@code checkpoint} on; each
     *     opening in log mode takes the next, and a record of an older epoch met past newer ones is
     *     left over from before a crash, never replayed
     * @param start position in the log stream from which records are replayed: the oldest record
     *     whose change may not yet be installed in the heap
     * @param checkpoint position in the log stream of the checkpoint: the changes that records before
     *     it made to the heap's structure are in the heap and in its snapshot
     * @param active whether the store was last opened in log mode, so that recovery follows the log
     */
    public record LogState(long epoch, long start, long checkpoint, boolean active) {
        public static final LogState NONE = new LogState(0, 0, 0, false);

        public LogState {
            if (epoch < 0 || start < 0 || checkpoint < start) {
                throw new IllegalArgumentException("log state must have 0 <= start <= checkpoint and a non-negative"
                        + " epoch, found epoch " + epoch + ", start " + start + ", checkpoint " + checkpoint);
            }
        }
    }

    /**
     * The only format version this library reads and writes: 3 frames the log region (see
     * {@code Frames}); 2, whose log had none, is refused as too old.
     */
    public static final int FORMAT_VERSION = 3;
    /** Bytes of one superblock slot; two slots start the container. */
    public static final int SLOT_SIZE = 4096;
    /** Bytes of the record in format versions 2 and 3, CRC included; the rest of the slot is zero. */
    public static final int RECORD_LENGTH = 192;
    /** Absolute offset of slot A. */
    public static final long SLOT_A_OFFSET = 0;
    /** Absolute offset of slot B. */
    public static final long SLOT_B_OFFSET = SLOT_SIZE;
    /** Absolute offset of the log region: right after the two slots. */
    public static final long LOG_OFFSET = 2L * SLOT_SIZE;

    static final String MAGIC = "HTODSTOR";
    private static final byte[] MAGIC_BYTES = MAGIC.getBytes(StandardCharsets.US_ASCII);
    static final int FLAG_CLEAN = 1;
    static final int FLAG_LOG_ACTIVE = 2;

    // Layout of the record, big-endian, offsets within the slot. Every format version keeps
    // magic, formatVersion and recordLength where they are and the CRC32C in the last four bytes
    // of the record, so any version can tell a newer store from a damaged one.
    //
    //        0               4               8               12              16
    //    0   +-------------------------------+---------------+---------------+
    //        | magic "HTODSTOR"              | formatVersion | recordLength  |
    //   16   +-------------------------------+-------------------------------+
    //        | sequence                      | storeId                       |
    //   32   +-------------------------------+---------------+---------------+
    //        | createdMillis                 | sectorSize    | slotSize      |
    //   48   +-------------------------------+-------------------------------+
    //        | logOffset                     | logSize                       |
    //   64   +-------------------------------+-------------------------------+
    //        | heapOffset                    | heapCapacity                  |
    //   80   +---+---+-------+---------------+---------------+---------------+
    //        |met|flg|  0    | grain         | maxQuickList  |acceptableWaste|
    //   96   +---+---+-------+---------------+-------------------------------+
    //        | obaThreshold  |  0            | snapshotOffset                |
    //  112   +---------------+---------------+-------------------------------+
    //        | snapshotLength                | rootCatalog                   |
    //  128   +-------------------------------+-------------------------------+
    //        | checkpointStamp               | logEpoch                      |
    //  144   +-------------------------------+-------------------------------+
    //        | logStart                      | logCheckpoint                 |
    //  160   +-------------------------------+-------------------------------+
    //        |  0 (bytes 160..187)                           | crc32c        |
    //  192   +-----------------------------------------------+---------------+
    //        met = storageMethod code, flg = flags (bit 0: clean shutdown, bit 1: log active);
    //        crc32c covers bytes 0..187; bytes 192..4095 of the slot are zero.
    static final int MAGIC_OFFSET = 0;
    static final int FORMAT_VERSION_OFFSET = 8;
    static final int RECORD_LENGTH_OFFSET = 12;
    static final int SEQUENCE_OFFSET = 16;
    static final int STORE_ID_OFFSET = 24;
    static final int CREATED_MILLIS_OFFSET = 32;
    static final int SECTOR_SIZE_OFFSET = 40;
    static final int SLOT_SIZE_OFFSET = 44;
    static final int LOG_OFFSET_OFFSET = 48;
    static final int LOG_SIZE_OFFSET = 56;
    static final int HEAP_OFFSET_OFFSET = 64;
    static final int HEAP_CAPACITY_OFFSET = 72;
    static final int STORAGE_METHOD_OFFSET = 80;
    static final int FLAGS_OFFSET = 81;
    static final int RESERVED_82_OFFSET = 82;
    static final int RESERVED_82_SIZE = 2;
    static final int GRAIN_OFFSET = 84;
    static final int MAX_QUICK_LIST_OFFSET = 88;
    static final int ACCEPTABLE_WASTE_OFFSET = 92;
    static final int OBA_THRESHOLD_OFFSET = 96;
    static final int RESERVED_100_OFFSET = 100;
    static final int RESERVED_100_SIZE = 4;
    static final int SNAPSHOT_OFFSET_OFFSET = 104;
    static final int SNAPSHOT_LENGTH_OFFSET = 112;
    static final int ROOT_CATALOG_OFFSET = 120;
    static final int CHECKPOINT_STAMP_OFFSET = 128;
    static final int LOG_EPOCH_OFFSET = 136;
    static final int LOG_START_OFFSET = 144;
    static final int LOG_CHECKPOINT_OFFSET = 152;
    static final int RESERVED_160_OFFSET = 160;
    static final int RESERVED_160_SIZE = 28;
    static final int CRC_OFFSET = 188;
    /** Smallest record any version may have: magic, version, length and CRC. */
    static final int MIN_RECORD_LENGTH = 20;

    /** Checks every invariant; see the parameter descriptions. */
    public Superblock {
        if (sequence < 1) {
            throw new IllegalArgumentException("sequence must be at least 1, found " + sequence);
        }
        if (storeId == 0) {
            throw new IllegalArgumentException("storeId must not be 0");
        }
        Limits.sectorSize(sectorSize);
        if (logOffset != LOG_OFFSET) {
            throw new IllegalArgumentException("logOffset must be " + LOG_OFFSET + ", found " + logOffset);
        }
        Limits.logSize(logSize);
        if (heapOffset != logOffset + logSize) {
            throw new IllegalArgumentException("heapOffset must be logOffset + logSize = " + (logOffset + logSize)
                    + ", found " + heapOffset);
        }
        Objects.requireNonNull(storageMethod, "storageMethod");
        Limits.grain(grain);
        Limits.heapCapacity(heapOffset, heapCapacity, grain);
        Limits.maxQuickList(maxQuickList);
        Limits.acceptableWaste(acceptableWaste);
        Limits.obaThreshold(obaThreshold);
        long heapEnd = heapOffset + heapCapacity;
        if (snapshotOffset == 0) {
            if (snapshotLength != 0) {
                throw new IllegalArgumentException("snapshotLength must be 0 when snapshotOffset is 0, found "
                        + snapshotLength);
            }
        } else if (snapshotOffset < logOffset || snapshotOffset > heapEnd
                || snapshotLength < 0 || snapshotLength > heapEnd - snapshotOffset) {
            throw new IllegalArgumentException("snapshot must lie between offsets " + logOffset + " and " + heapEnd
                    + ", found offset " + snapshotOffset + " length " + snapshotLength);
        }
        if (rootCatalog != 0 && (rootCatalog < heapOffset || rootCatalog >= heapEnd)) {
            throw new IllegalArgumentException("rootCatalog must be 0 or between offsets " + heapOffset + " and "
                    + (heapEnd - 1) + ", found " + rootCatalog);
        }
        Objects.requireNonNull(log, "log");
    }

    /** Absolute offset just past the heap region: {@code heapOffset + heapCapacity}. */
    public long heapEnd() {
        return heapOffset + heapCapacity;
    }

    public Superblock withClean(boolean isClean) {
        return new Superblock(sequence, storeId, createdMillis, sectorSize, logOffset, logSize, heapOffset,
                heapCapacity, storageMethod, isClean, grain, maxQuickList, acceptableWaste, obaThreshold,
                snapshotOffset, snapshotLength, rootCatalog, checkpointStamp, log);
    }

    /** A copy pointing at a snapshot; {@code (0, 0)} for none. */
    public Superblock withSnapshot(long offset, long length) {
        return new Superblock(sequence, storeId, createdMillis, sectorSize, logOffset, logSize, heapOffset,
                heapCapacity, storageMethod, clean, grain, maxQuickList, acceptableWaste, obaThreshold,
                offset, length, rootCatalog, checkpointStamp, log);
    }

    /** A copy pointing at a root catalog block; 0 for none. */
    public Superblock withRootCatalog(long offset) {
        return new Superblock(sequence, storeId, createdMillis, sectorSize, logOffset, logSize, heapOffset,
                heapCapacity, storageMethod, clean, grain, maxQuickList, acceptableWaste, obaThreshold,
                snapshotOffset, snapshotLength, offset, checkpointStamp, log);
    }

    public Superblock withCheckpointStamp(long stamp) {
        return new Superblock(sequence, storeId, createdMillis, sectorSize, logOffset, logSize, heapOffset,
                heapCapacity, storageMethod, clean, grain, maxQuickList, acceptableWaste, obaThreshold,
                snapshotOffset, snapshotLength, rootCatalog, stamp, log);
    }

    /** A copy with the allocator's tuning parameters changed: maxQL, w and T. */
    public Superblock withAllocatorTuning(int newMaxQuickList, int newAcceptableWaste, int newObaThreshold) {
        return new Superblock(sequence, storeId, createdMillis, sectorSize, logOffset, logSize, heapOffset,
                heapCapacity, storageMethod, clean, grain, newMaxQuickList, newAcceptableWaste, newObaThreshold,
                snapshotOffset, snapshotLength, rootCatalog, checkpointStamp, log);
    }

    /** A copy with the log's state changed. */
    public Superblock withLog(LogState state) {
        return new Superblock(sequence, storeId, createdMillis, sectorSize, logOffset, logSize, heapOffset,
                heapCapacity, storageMethod, clean, grain, maxQuickList, acceptableWaste, obaThreshold,
                snapshotOffset, snapshotLength, rootCatalog, checkpointStamp, state);
    }

    Superblock withSequence(long seq) {
        return new Superblock(seq, storeId, createdMillis, sectorSize, logOffset, logSize, heapOffset,
                heapCapacity, storageMethod, clean, grain, maxQuickList, acceptableWaste, obaThreshold,
                snapshotOffset, snapshotLength, rootCatalog, checkpointStamp, log);
    }

    /** This superblock as a full {@value #SLOT_SIZE}-byte slot, CRC included, positioned at 0. */
    public ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(SLOT_SIZE).order(ByteOrder.BIG_ENDIAN);
        b.put(MAGIC_OFFSET, MAGIC_BYTES);
        b.putInt(FORMAT_VERSION_OFFSET, FORMAT_VERSION);
        b.putInt(RECORD_LENGTH_OFFSET, RECORD_LENGTH);
        b.putLong(SEQUENCE_OFFSET, sequence);
        b.putLong(STORE_ID_OFFSET, storeId);
        b.putLong(CREATED_MILLIS_OFFSET, createdMillis);
        b.putInt(SECTOR_SIZE_OFFSET, sectorSize);
        b.putInt(SLOT_SIZE_OFFSET, SLOT_SIZE);
        b.putLong(LOG_OFFSET_OFFSET, logOffset);
        b.putLong(LOG_SIZE_OFFSET, logSize);
        b.putLong(HEAP_OFFSET_OFFSET, heapOffset);
        b.putLong(HEAP_CAPACITY_OFFSET, heapCapacity);
        b.put(STORAGE_METHOD_OFFSET, (byte) storageMethod.code());
        b.put(FLAGS_OFFSET, (byte) ((clean ? FLAG_CLEAN : 0) | (log.active() ? FLAG_LOG_ACTIVE : 0)));
        b.putInt(GRAIN_OFFSET, grain);
        b.putInt(MAX_QUICK_LIST_OFFSET, maxQuickList);
        b.putInt(ACCEPTABLE_WASTE_OFFSET, acceptableWaste);
        b.putInt(OBA_THRESHOLD_OFFSET, obaThreshold);
        b.putLong(SNAPSHOT_OFFSET_OFFSET, snapshotOffset);
        b.putLong(SNAPSHOT_LENGTH_OFFSET, snapshotLength);
        b.putLong(ROOT_CATALOG_OFFSET, rootCatalog);
        b.putLong(CHECKPOINT_STAMP_OFFSET, checkpointStamp);
        b.putLong(LOG_EPOCH_OFFSET, log.epoch());
        b.putLong(LOG_START_OFFSET, log.start());
        b.putLong(LOG_CHECKPOINT_OFFSET, log.checkpoint());
        b.putInt(CRC_OFFSET, crc(b, RECORD_LENGTH - 4));
        return b;
    }

    /**
     * Reads a superblock from a slot, checking in this order: magic, record framing and CRC32C,
     * format version, then every field. Reads from the buffer's position without moving it.
     *
     * @param slot at least {@value #SLOT_SIZE} bytes remaining
     * @param storeName the device or file, for error messages
     * @param slotOffset absolute offset of the slot, for error messages
     * @throws NotAStoreException if the slot does not start with the magic and does not look like
     *     a damaged superblock either
     * @throws CorruptStoreException if the slot holds a damaged superblock: bad magic in an
     *     otherwise recognizable record, bad record length, CRC mismatch, or a field out of range
     * @throws IncompatibleFormatException if the record is intact but of another format version
     */
    public static Superblock decode(ByteBuffer slot, String storeName, long slotOffset) {
        if (slot.remaining() < SLOT_SIZE) {
            throw new IllegalArgumentException("a superblock slot is " + SLOT_SIZE + " bytes, given "
                    + slot.remaining());
        }
        ByteBuffer b = slot.slice(slot.position(), SLOT_SIZE).order(ByteOrder.BIG_ENDIAN);
        String where = storeName + ": superblock at offset " + slotOffset + " is damaged: ";
        int version = b.getInt(FORMAT_VERSION_OFFSET);
        int length = b.getInt(RECORD_LENGTH_OFFSET);

        if (!hasMagic(b)) {
            String found = describeBytes(b, MAGIC_OFFSET, MAGIC_BYTES.length);
            // Only the magic is wrong in a record whose framing is ours: damage, not a stranger.
            if (version == FORMAT_VERSION && length == RECORD_LENGTH && b.getInt(SLOT_SIZE_OFFSET) == SLOT_SIZE) {
                throw new CorruptStoreException(where + "expected magic " + MAGIC + ", found " + found, slotOffset);
            }
            throw new NotAStoreException(storeName + " is not an htod store: expected magic " + MAGIC
                    + " at offset " + slotOffset + ", found " + found);
        }
        if (length < MIN_RECORD_LENGTH || length > SLOT_SIZE) {
            String expected = version == FORMAT_VERSION ? Integer.toString(RECORD_LENGTH)
                    : "between " + MIN_RECORD_LENGTH + " and " + SLOT_SIZE;
            throw new CorruptStoreException(where + "field recordLength at offset "
                    + (slotOffset + RECORD_LENGTH_OFFSET) + ": expected " + expected + ", found " + length,
                    slotOffset + RECORD_LENGTH_OFFSET);
        }
        int stored = b.getInt(length - 4);
        int computed = crc(b, length - 4);
        if (stored != computed) {
            throw new CorruptStoreException(where + "expected CRC32C " + hex32(computed) + " of bytes 0.."
                    + (length - 5) + ", found " + hex32(stored) + " at offset " + (slotOffset + length - 4),
                    slotOffset);
        }
        if (version != FORMAT_VERSION) {
            throw new IncompatibleFormatException(storeName, version, FORMAT_VERSION, FORMAT_VERSION);
        }
        if (length != RECORD_LENGTH) {
            throw badField(where, slotOffset, "recordLength", RECORD_LENGTH_OFFSET,
                    Integer.toString(RECORD_LENGTH), Integer.toString(length));
        }
        int slotSize = b.getInt(SLOT_SIZE_OFFSET);
        if (slotSize != SLOT_SIZE) {
            throw badField(where, slotOffset, "slotSize", SLOT_SIZE_OFFSET,
                    Integer.toString(SLOT_SIZE), Integer.toString(slotSize));
        }
        int methodCode = Byte.toUnsignedInt(b.get(STORAGE_METHOD_OFFSET));
        StorageMethod method = StorageMethod.lookup(methodCode);
        if (method == null) {
            throw badField(where, slotOffset, "storageMethod", STORAGE_METHOD_OFFSET,
                    StorageMethod.describeCodes(), Integer.toString(methodCode));
        }
        int flags = Byte.toUnsignedInt(b.get(FLAGS_OFFSET));
        if ((flags & ~(FLAG_CLEAN | FLAG_LOG_ACTIVE)) != 0) {
            throw badField(where, slotOffset, "flags", FLAGS_OFFSET, "only bits 0 (clean) and 1 (log active) set",
                    "0x" + Integer.toHexString(flags));
        }
        checkZero(b, where, slotOffset, RESERVED_82_OFFSET, RESERVED_82_SIZE);
        checkZero(b, where, slotOffset, RESERVED_100_OFFSET, RESERVED_100_SIZE);
        checkZero(b, where, slotOffset, RESERVED_160_OFFSET, RESERVED_160_SIZE);
        try {
            return new Superblock(
                    b.getLong(SEQUENCE_OFFSET),
                    b.getLong(STORE_ID_OFFSET),
                    b.getLong(CREATED_MILLIS_OFFSET),
                    b.getInt(SECTOR_SIZE_OFFSET),
                    b.getLong(LOG_OFFSET_OFFSET),
                    b.getLong(LOG_SIZE_OFFSET),
                    b.getLong(HEAP_OFFSET_OFFSET),
                    b.getLong(HEAP_CAPACITY_OFFSET),
                    method,
                    (flags & FLAG_CLEAN) != 0,
                    b.getInt(GRAIN_OFFSET),
                    b.getInt(MAX_QUICK_LIST_OFFSET),
                    b.getInt(ACCEPTABLE_WASTE_OFFSET),
                    b.getInt(OBA_THRESHOLD_OFFSET),
                    b.getLong(SNAPSHOT_OFFSET_OFFSET),
                    b.getLong(SNAPSHOT_LENGTH_OFFSET),
                    b.getLong(ROOT_CATALOG_OFFSET),
                    b.getLong(CHECKPOINT_STAMP_OFFSET),
                    new LogState(b.getLong(LOG_EPOCH_OFFSET), b.getLong(LOG_START_OFFSET),
                            b.getLong(LOG_CHECKPOINT_OFFSET), (flags & FLAG_LOG_ACTIVE) != 0));
        } catch (IllegalArgumentException e) {
            // The record passed its CRC, so a field out of range was written that way: say which.
            throw new CorruptStoreException(where + e.getMessage(), slotOffset);
        }
    }

    /** True when the slot starts with the magic; reads from the buffer's position. */
    static boolean hasMagic(ByteBuffer slot) {
        if (slot.remaining() < MAGIC_BYTES.length) {
            return false;
        }
        for (int i = 0; i < MAGIC_BYTES.length; i++) {
            if (slot.get(slot.position() + i) != MAGIC_BYTES[i]) {
                return false;
            }
        }
        return true;
    }

    private static void checkZero(ByteBuffer b, String where, long slotOffset, int offset, int size) {
        for (int i = offset; i < offset + size; i++) {
            if (b.get(i) != 0) {
                throw badField(where, slotOffset, "reserved", offset, "zero in bytes " + offset + ".."
                        + (offset + size - 1), describeBytes(b, offset, size));
            }
        }
    }

    private static CorruptStoreException badField(String where, long slotOffset, String field, int offset,
            String expected, String found) {
        long at = slotOffset + offset;
        return new CorruptStoreException(where + "field " + field + " at offset " + at + ": expected " + expected
                + ", found " + found, at);
    }

    private static int crc(ByteBuffer b, int length) {
        CRC32C crc = new CRC32C();
        crc.update(b.slice(0, length));
        return (int) crc.getValue();
    }

    static String hex32(int v) {
        return String.format("0x%08x", v);
    }

    /** The bytes in hex, followed by their ASCII text when all are printable. */
    static String describeBytes(ByteBuffer b, int offset, int length) {
        StringBuilder hex = new StringBuilder("0x");
        StringBuilder text = new StringBuilder();
        boolean printable = true;
        for (int i = offset; i < offset + length; i++) {
            int v = Byte.toUnsignedInt(b.get(i));
            hex.append(Character.forDigit(v >> 4, 16)).append(Character.forDigit(v & 15, 16));
            printable &= v >= 0x20 && v < 0x7f;
            text.append((char) v);
        }
        return printable ? hex + " (\"" + text + "\")" : hex.toString();
    }
}
