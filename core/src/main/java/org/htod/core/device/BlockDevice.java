package org.htod.core.device;

import java.nio.ByteBuffer;

/**
 * Positional storage under a store: a file, a raw disk, memory, or a wrapper that counts, crashes
 * or fails. Every byte any htod layer reads or writes passes through this interface, which is
 * what lets tests inject power loss and count I/Os without touching the layers above.
 *
 * <p>Contract, shared by every implementation and checked by the device contract tests:
 *
 * <ul>
 *   <li>{@link #read} fills {@code dst} from its position to its limit with the bytes at {@code
 *       pos}, or throws; bytes never written read as zero; reading past {@link #size()} throws
 *       {@link org.htod.core.HtodIOException}.
 *   <li>{@link #write} writes all of {@code src} from its position to its limit at {@code pos},
 *       growing the device when it can; a write beyond what the device can hold throws {@link
 *       org.htod.core.StoreFullException} before anything is written.
 *   <li>A write is durable only after a later {@link #sync()} returns. Until then a crash may
 *       keep it, drop it, or tear it at {@link #sectorSize()} granularity.
 *   <li>A write that throws may have written part of its bytes, whole sectors of them: each
 *       sector it covers holds its old bytes or its new ones, as after a tear (a file's page
 *       cache takes a short write up to a page boundary, a disk completes a request sector by
 *       sector). The log counts on it: a frame left part old, part new would fail its CRC where
 *       its durable records end, which recovery refuses as damage.
 *   <li>{@link #writeDurable} is a write that is durable when it returns, by itself: other writes
 *       not yet synced may or may not become durable with it, and no caller may count on either.
 *   <li>Offsets are 64-bit; no limit at 2 or 4 GB.
 *   <li>After {@link #close()}, every call but {@code close} throws {@link
 *       org.htod.core.StoreClosedException}.
 *   <li>Errors are unchecked {@link org.htod.core.HtodException}s that name the device and offset.
 * </ul>
 *
 * <p>Implementations are safe for concurrent positional reads and writes to disjoint ranges.
 */
public interface BlockDevice extends AutoCloseable {

    /** Reads {@code dst.remaining()} bytes at {@code pos} into {@code dst}, advancing its position. */
    void read(long pos, ByteBuffer dst);

    /** Writes {@code src.remaining()} bytes at {@code pos}, advancing the buffer's position. */
    void write(long pos, ByteBuffer src);

    /**
     * Makes every write that returned before this call durable. One that throws may have lost
     * writes made before it; a file or raw device then refuses every later sync ({@link
     * org.htod.core.DeviceFailedException}) until it is opened again, since a later sync that
     * passed would not mean those writes are on the disk.
     */
    void sync();

    /**
     * Writes {@code src.remaining()} bytes at {@code pos} and returns once they are durable; a
     * crash during the call may keep, drop or tear them, as for an unsynced write. Unlike {@link
     * #write} followed by {@link #sync}, it need not make any other write durable, which lets a
     * file device write through ({@code O_DSYNC}) without also flushing every page other threads
     * dirtied in the file: the log's group commit uses it, so that a commit waits for its own
     * frames only, not for the flusher's installs. The default is that write and sync.
     */
    default void writeDurable(long pos, ByteBuffer src) {
        write(pos, src);
        sync();
    }

    /** Bytes the device currently holds: the highest written offset for files, the capacity for disks. */
    long size();

    /** Most bytes the device can ever hold ({@link Long#MAX_VALUE} when only the file system limits it). */
    long capacity();

    /** Unit of atomic writes: a crash tears a write only at multiples of this. */
    int sectorSize();

    /** A name for error messages: the file path, the device path, or a description. */
    String name();

    /** Releases the device; idempotent. Does not sync. */
    @Override
    void close();
}
