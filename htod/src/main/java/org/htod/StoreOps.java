package org.htod;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import org.htod.core.HtodException;
import org.htod.core.HtodIOException;
import org.htod.core.NotAStoreException;
import org.htod.core.StoreFullException;
import org.htod.core.StoreLockedException;
import org.htod.core.container.Container;
import org.htod.core.container.Superblock;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.FileDevice;
import org.htod.core.device.FileNames;
import org.htod.table.EntryScanner;

/**
 * Copy, compaction and salvage: each writes a new store beside its target under a temporary name,
 * closes it cleanly, and only then renames it into place (atomically, on one file system), so
 * that a failure (the disk full, say) leaves the target absent or as it was, and never touches
 * the source.
 */
final class StoreOps {
    private static final System.Logger LOG = System.getLogger(StoreOps.class.getName());

    /**
     * How the file of a store being written (a copy, a compaction) is opened: as a file, or, in
     * tests, as a file whose disk fills up. Passed down, not kept anywhere, so that a test's disk
     * never reaches another store.
     */
    static final Function<Path, BlockDevice> FILES = FileDevice::open;

    private StoreOps() {}

    /** A builder for a new store laid out as {@code sb} says (method, grain, allocator parameters, log size). */
    static Htod.Builder like(Path path, Superblock sb) {
        return like(Htod.builder(path), sb);
    }

    static Htod.Builder like(Htod.Builder b, Superblock sb) {
        // In the source's mode too: a copy or compaction of a direct-mode store was created in log
        // mode, and opened as such, with directMode(true) refused, from then on.
        return b.directMode(sb.rootCatalog() != 0 && !sb.log().active())
                .storageMethod(StorageMethod.valueOf(sb.storageMethod().name())).grain(sb.grain())
                .maxQuickList(sb.maxQuickList()).acceptableWaste(sb.acceptableWaste()).obaThreshold(sb.obaThreshold())
                .logSize(sb.logSize()).heapCapacity(sb.heapCapacity()).durability(Durability.NONE);
    }

    /**
     * Deletes the files a copy or compaction into {@code store}'s name left behind when its
     * process died ({@link FileNames#temporary} names them), once the store is open and locked: none of
     * them can then become the store (a compaction renames only while it holds the store open),
     * and one that no open device holds locked is written by no copy either. One that is locked
     * (a copy into that name going on), or that cannot be opened, is left.
     */
    static void removeLeftovers(Path store) {
        Path abs = store.toAbsolutePath();
        try (DirectoryStream<Path> found = Files.newDirectoryStream(abs.getParent(), p -> FileNames.isTemporary(abs, p))) {
            for (Path p : found) {
                if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                FileDevice held = null;
                try {
                    held = FileDevice.open(p); // refused while a copy holds it
                    Files.delete(p); // deleted while held, so that no copy can lock it between
                    LOG.log(System.Logger.Level.INFO, () -> "deleted " + p + ", left by a copy or compaction that did not finish");
                } catch (HtodException | IOException e) {
                    LOG.log(System.Logger.Level.DEBUG, () -> "left " + p + ": " + e.getMessage());
                } finally {
                    if (held != null) {
                        held.close();
                    }
                }
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "cannot look for leftovers beside " + abs + ": " + e);
        }
    }

    static void refuseExisting(Path target) {
        if (Files.exists(target)) {
            throw new HtodException(target + " exists: a copy or salvage writes a new store and never overwrites one");
        }
    }

    /** Renames {@code tmp} to {@code target} atomically and makes the rename durable. */
    static void publish(Path tmp, Path target, boolean replace) {
        try {
            if (replace) {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } else {
                // ATOMIC_MOVE may replace silently on some systems: a link refuses an existing target.
                Files.createLink(target, tmp);
                Files.delete(tmp);
            }
            Path dir = target.toAbsolutePath().getParent();
            try {
                FileNames.syncDirectory(dir);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, () -> "cannot sync directory " + dir + " after renaming " + tmp
                        + " to " + target + " (a crash may bring the old name back): " + e);
            }
        } catch (FileAlreadyExistsException e) {
            throw new HtodException(target + " exists: a copy or salvage never overwrites a store", e);
        } catch (IOException e) {
            throw new HtodIOException("cannot rename " + tmp + " to " + target + ": " + e.getMessage(), e);
        }
    }

    /** {@code p} with its links followed; as given if it cannot be (the open that follows says why). */
    static Path realPath(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p;
        }
    }

    static void deleteQuietly(Path p, Throwable failure) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            return -1;
        }
    }

    /**
     * Writes every entry of {@code source} into a new store at {@code tmp}, laid out like it,
     * closes it cleanly and checks it with the verifier. Returns the entries and maps written.
     */
    static long[] copyInto(HtodStore source, Path tmp, Progress progress, boolean frozen,
            Function<Path, BlockDevice> files) {
        Superblock sb = source.storage().superblock();
        BlockDevice dev = files.apply(tmp);
        try {
            return copyInto(source, dev, tmp, sb, progress, frozen);
        } catch (StoreFullException e) {
            throw new StoreFullException("the disk is full: cannot write the copy of " + source.device().name() + " into "
                    + tmp + ", which is removed (" + e.getMessage() + ")", e);
        } finally {
            // A close that failed (the disk full as it wrote its last state) leaves the device
            // open; the file is about to be removed, so it is closed here whatever happened.
            dev.close();
        }
    }

    private static long[] copyInto(HtodStore source, BlockDevice dev, Path tmp, Superblock sb, Progress progress,
            boolean frozen) {
        try (HtodStore out = like(Htod.builder(dev), sb).open()) {
            return writeCopy(source, out, tmp, progress, frozen);
        }
    }

    /**
     * Every entry of {@code source} (as of one instant when {@code frozen}) written into {@code
     * out} with batch allocation, its empty maps created, then {@code out} checked with the
     * verifier. Returns the entries and maps written.
     */
    static long[] writeCopy(HtodStore source, HtodStore out, Path tmp, Progress progress, boolean frozen) {
        // The source's clock, as its reads judge expiry: the system's dropped entries still live by
        // a store clock that runs behind it.
        StoreCopier copier = new StoreCopier(out, source.now());
        long[] total = {-1};
        long[] done = {0};
        source.copyEntries(frozen, t -> {
            total[0] = t;
            progress.step(0, t);
        }, (map, e) -> {
            copier.add(map, e.key(), e.value(), e.expiry(), e.version());
            if ((++done[0] & 255) == 0) {
                progress.step(done[0], total[0]);
            }
        });
        copier.finish();
        progress.step(done[0], total[0]);
        for (String name : source.mapNames()) {
            out.map(name, Codec.bytes(), Codec.bytes()); // empty maps too
        }
        VerifyReport v = out.verify();
        if (!v.ok()) {
            throw new HtodException("the store written to " + tmp + " does not verify: " + v);
        }
        return new long[] {copier.entries(), out.mapNames().size()};
    }

    static CopyReport compact(Path given, Progress progress, Function<Path, BlockDevice> files) {
        // The file a link names, not the link: renamed over it, the compacted file replaced the
        // link, and the file it named stayed as it was.
        Path path = realPath(given);
        long before = size(path);
        HtodStore source = Htod.builder(path).createIfMissing(false).modeAsStored(true).open();
        Path tmp = FileNames.temporary(path);
        try {
            long[] n = copyInto(source, tmp, progress, false, files);
            // Renamed while the source is still open and locked, so that no other opening can
            // write to the file being replaced; closing it afterwards writes to the old file only.
            publish(tmp, path, true);
            source.close();
            return new CopyReport(path, (int) n[1], n[0], before, size(path), "walk", 0, -1, null);
        } catch (RuntimeException e) {
            deleteQuietly(tmp, e);
            try {
                source.close();
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
    }

    /** {@link Htod#copy}, writing the copy's file as {@code files} opens it. */
    static CopyReport copy(Path source, Path target, Progress progress, Function<Path, BlockDevice> files) {
        refuseExisting(target);
        try (HtodStore s = Htod.builder(source).createIfMissing(false).modeAsStored(true).open()) {
            Path tmp = FileNames.temporary(target);
            try {
                long[] n = copyInto(s, tmp, progress, false, files);
                publish(tmp, target, false);
                return new CopyReport(target, (int) n[1], n[0], size(source), size(target), "walk", 0, -1, null);
            } catch (RuntimeException e) {
                deleteQuietly(tmp, e);
                throw e;
            }
        }
    }

    static CopyReport salvage(Path damaged, Path target, Progress progress) {
        if (!Files.exists(damaged)) {
            throw new NotAStoreException(damaged + " does not exist");
        }
        refuseExisting(target);
        long before = size(damaged);
        // First a walk of the store, opened as any open does (the log replayed), but read-only:
        // whatever its recovery writes stays in memory, and the file is held under a shared lock
        // that a writer's open refuses, and never written. It misses nothing if the damage lets
        // it read every map. A walk of a copy of the file, as before, took the file's size again
        // on disk (three times with the tool's own copy); it is made now only when the recovery
        // writes more than the read-only open may hold in memory.
        String why;
        try {
            HtodStore s;
            try {
                s = Htod.builder(damaged).readOnly(true).createIfMissing(false).modeAsStored(true).open();
            } catch (StoreFullException e) {
                return walkCopy(damaged, target, progress, before);
            }
            try (s) {
                return walk(s, target, progress, before);
            }
        } catch (StoreLockedException e) {
            throw e; // a store open elsewhere: salvage reads only a file nobody writes
        } catch (HtodException e) {
            why = e.getMessage();
        } catch (IOException e) {
            why = "cannot copy " + damaged + " to walk it: " + e.getMessage();
        } catch (RuntimeException e) {
            // Damage the open or the walk did not expect: the scan, which trusts nothing but
            // checksums, is what a salvage is for; aborting here left the entries unread.
            why = "the walk failed: " + e;
        }
        String reason = why;
        LOG.log(System.Logger.Level.INFO, () -> "salvage of " + damaged + " scans its heap: " + reason);
        return scan(damaged, target, progress, before, reason);
    }

    /** The walk of {@link #salvage} over a copy of the damaged file, opened to write as a crashed store's open needs. */
    private static CopyReport walkCopy(Path damaged, Path target, Progress progress, long before) throws IOException {
        Path work = FileNames.temporary(target);
        try {
            try (FileDevice in = FileDevice.openReadOnly(damaged)) { // the copy made under its shared lock
                copyDevice(in, work);
            }
            try (HtodStore s = Htod.builder(work).createIfMissing(false).modeAsStored(true).open()) {
                return walk(s, target, progress, before);
            }
        } finally {
            try {
                Files.deleteIfExists(work);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, () -> "cannot delete " + work + ": " + e);
            }
        }
    }

    /** Copies {@code in} whole into the new file {@code out}, synced. */
    private static void copyDevice(FileDevice in, Path out) throws IOException {
        try (FileChannel ch = FileChannel.open(out, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            long size = in.size();
            ByteBuffer buf = ByteBuffer.allocateDirect((int) Math.max(1, Math.min(size, 1 << 20)));
            for (long at = 0; at < size; ) {
                buf.clear().limit((int) Math.min(buf.capacity(), size - at));
                in.read(at, buf);
                buf.flip();
                at += buf.remaining();
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
            }
            ch.force(true);
        }
    }

    /** The walk of {@link #salvage}: every map of {@code s}, if it verifies, copied into {@code target}. */
    private static CopyReport walk(HtodStore s, Path target, Progress progress, long before) {
        VerifyReport sound = s.verify();
        if (!sound.ok()) {
            throw new HtodException("it opens but does not verify: " + sound.problems().get(0));
        }
        Path tmp = FileNames.temporary(target);
        try {
            long[] n = copyInto(s, tmp, progress, false, FILES);
            publish(tmp, target, false);
            return new CopyReport(target, (int) n[1], n[0], before, size(target), "walk", 0, -1, null);
        } catch (RuntimeException e) {
            deleteQuietly(tmp, e);
            throw e;
        }
    }

    private static CopyReport scan(Path damaged, Path target, Progress progress, long before, String why) {
        Path tmp = FileNames.temporary(target);
        try (FileDevice dev = FileDevice.openReadOnly(damaged)) {
            Superblock sb = Container.open(dev).superblock();
            int grain = sb.grain();
            long first = (sb.heapOffset() + 2 * 4096L + grain - 1) / grain * grain;
            long end = Math.min(dev.size(), sb.heapOffset() + sb.heapCapacity()) / grain * grain;
            long span = Math.max(0, end - first);
            // Pass 1: the catalog's entries (a map's name and its table id, in a 16-byte value).
            Map<Long, Map<Long, String>> namesByCatalog = new HashMap<>();
            Map<Long, Long> seen = new HashMap<>();
            EntryScanner.scan(dev, first, end, grain, f -> {
                seen.merge(f.tableId(), 1L, Long::sum);
                if (f.value().length == 16) {
                    String name = utf8(f.key());
                    if (name != null) {
                        namesByCatalog.computeIfAbsent(f.tableId(), t -> new HashMap<>())
                                .put(ByteBuffer.wrap(f.value()).getLong(8), name);
                    }
                }
            }, done -> progress.step(done / 2, span));
            long catalog = 0;
            long best = -1;
            for (Map.Entry<Long, Map<Long, String>> c : namesByCatalog.entrySet()) {
                long named = c.getValue().keySet().stream().filter(seen::containsKey).count();
                if (named > best) {
                    best = named;
                    catalog = c.getKey();
                }
            }
            Map<Long, String> names = namesByCatalog.getOrDefault(catalog, Map.of());
            long catalogId = catalog;
            // Pass 2: every other entry, into the map its table id names.
            EntryScanner.Scan scan;
            long entries;
            int maps;
            try (HtodStore out = like(tmp, sb).open()) {
                StoreCopier copier = new StoreCopier(out, System.currentTimeMillis(), true); // older copies of a key too
                scan = EntryScanner.scan(dev, first, end, grain, f -> {
                    if (f.tableId() != catalogId || names.isEmpty()) {
                        String map = names.getOrDefault(f.tableId(), "salvaged-" + Long.toHexString(f.tableId()));
                        copier.add(map, f.key(), f.value(), f.expiry(), f.version());
                    }
                }, done -> progress.step(span / 2 + done / 2, span));
                copier.finish();
                entries = copier.entries();
                maps = out.mapNames().size();
                VerifyReport v = out.verify();
                if (!v.ok()) {
                    throw new HtodException("the store written to " + tmp + " does not verify: " + v);
                }
            }
            publish(tmp, target, false);
            return new CopyReport(target, maps, entries, before, size(target), "scan", scan.unreadableBytes(),
                    scan.firstUnreadable(), "a walk failed (" + why + ")");
        } catch (RuntimeException e) {
            deleteQuietly(tmp, e);
            throw e;
        }
    }

    private static String utf8(byte[] b) {
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

}
