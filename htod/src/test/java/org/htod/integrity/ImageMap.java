package org.htod.integrity;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every byte range of an undamaged store image named by the structure it belongs to, found by
 * walking the image as {@code docs/FORMAT.md} draws it (format version 3): superblock copies, the
 * log region, log mode's checkpoint block, heap checkpoint, block
 * headers, table headers (current and older slot), bucket directories and slots, entries field by
 * field (of a map, or of the catalog; live, or an older version), the snapshot, what lies past the
 * tail. The fuzz test aims damage with it and says what each damage hit. A walk that meets
 * something it cannot read stops there and leaves the rest unnamed: the names are for aiming and
 * reporting, never for judging an answer.
 */
final class ImageMap {
    /** A named byte range {@code [start, end)}; {@code detail} says which map, key or bucket. */
    record Region(long start, long end, String structure, String detail) {
        @Override
        public String toString() {
            return structure + (detail.isEmpty() ? "" : " (" + detail + ")") + " [" + start + ", " + end + ")";
        }
    }

    private final List<Region> regions;
    private final long[] starts;
    final long length;
    private final Map<String, List<Region>> byPrefix = new java.util.concurrent.ConcurrentHashMap<>();

    private ImageMap(List<Region> regions, long length) {
        regions.sort((a, b) -> Long.compare(a.start, b.start));
        this.regions = regions;
        this.starts = regions.stream().mapToLong(Region::start).toArray();
        this.length = length;
    }

    /** The region holding {@code offset}, or an "unnamed" one. */
    Region at(long offset) {
        int i = Arrays.binarySearch(starts, offset);
        if (i < 0) {
            i = -i - 2;
        }
        if (i >= 0 && offset < regions.get(i).end) {
            return regions.get(i);
        }
        return new Region(offset, offset + 1, offset >= length ? "past.end" : "unnamed", "");
    }

    /** Regions whose structure starts with {@code prefix}. */
    List<Region> all(String prefix) {
        return byPrefix.computeIfAbsent(prefix, p -> {
            List<Region> out = new ArrayList<>();
            for (Region r : regions) {
                if (r.structure.startsWith(p)) {
                    out.add(r);
                }
            }
            return List.copyOf(out);
        });
    }

    static ImageMap of(byte[] image, Model truth) {
        List<Region> out = new ArrayList<>();
        try {
            new Walk(ByteBuffer.wrap(image), truth, out).run();
        } catch (RuntimeException e) {
            // a structure the walk does not understand: what it named so far stays named
        }
        return new ImageMap(out, image.length);
    }

    /** One walk of an image. */
    private static final class Walk {
        private final ByteBuffer b;
        private final Model truth;
        private final List<Region> out;
        private int grain;
        private final Map<Long, long[]> tables = new HashMap<>(); // header address -> tableId, current slot, array, newArray
        private final Map<Long, String> tableNames = new HashMap<>(); // tableId -> map name, "(catalog)" for the catalog
        private final List<long[]> blocks = new ArrayList<>(); // address, size, allocated

        Walk(ByteBuffer b, Model truth, List<Region> out) {
            this.b = b;
            this.truth = truth;
            this.out = out;
        }

        private void add(long start, long end, String structure, String detail) {
            if (end > start) {
                out.add(new Region(start, Math.min(end, b.capacity()), structure, detail));
            }
        }

        void run() {
            // Format version 2: a record of 192 bytes; every update writes both copies, so both
            // hold the current superblock except when an update was cut between them.
            long seqA = b.getLong(16);
            long seqB = b.getLong(4096 + 16);
            add(0, 192, seqA >= seqB ? "superblock.current" : "superblock.older", "copy A, sequence " + seqA);
            add(4096, 4096 + 192, seqB >= seqA ? "superblock.current" : "superblock.older", "copy B, sequence " + seqB);
            add(192, 4096, "superblock.padding", "copy A");
            add(4096 + 192, 8192, "superblock.padding", "copy B");
            int cur = seqA >= seqB ? 0 : 4096;
            long heapOffset = b.getLong(cur + 64);
            grain = b.getInt(cur + 84);
            boolean logActive = (b.get(cur + 81) & 2) != 0;
            long snapshot = b.getLong(cur + 104);
            long snapshotLength = b.getLong(cur + 112);
            long catalog = b.getLong(cur + 120);
            add(8192, heapOffset, "log", "");
            for (int copy = 0; copy < 2; copy++) {
                long at = heapOffset + 4096L * copy;
                long record = 36 + 8L * b.getInt((int) at + 32) + 4; // the rest of the copy is padding no CRC covers
                add(at, at + record, "heap.checkpoint.record", copy == 0 ? "copy A" : "copy B");
                add(at + record, at + 4096, "heap.checkpoint.padding", copy == 0 ? "copy A" : "copy B");
            }
            long tail = walkBlocks((heapOffset + 8192 + grain - 1) / grain * grain);
            if (logActive && snapshot != 0) {
                add(snapshot, snapshot + snapshotLength, "checkpoint", "log mode's, in a heap block");
                add(tail, b.capacity(), "past.tail", "");
            } else if (snapshot != 0) {
                add(snapshot, snapshot + snapshotLength, "snapshot", "");
                add(tail, snapshot, "past.tail", "");
                add(snapshot + snapshotLength, b.capacity(), "past.tail", "");
            } else {
                add(tail, b.capacity(), "past.tail", "");
            }
            findTables(catalog);
            for (long[] blk : blocks) {
                name(blk[0], blk[1], blk[2] == 1);
            }
        }

        /** Block headers from the first block while they look like headers; returns where they stop: the tail. */
        private long walkBlocks(long pos) {
            int code = b.getInt((int) pos);
            while (pos + 48 <= b.capacity()) {
                long size = b.getLong((int) pos + 8);
                byte status = b.get((int) pos + 40);
                if (b.getInt((int) pos) != code || size < grain || size % grain != 0 || pos + size > b.capacity()
                        || status != (byte) 0xA1 && status != (byte) 0xF4) {
                    break;
                }
                blocks.add(new long[] {pos, size, status == (byte) 0xA1 ? 1 : 0});
                add(pos, pos + 48, "block.header", "block at " + pos);
                pos += size;
            }
            return pos;
        }

        private void findTables(long catalogAddress) {
            for (long[] blk : blocks) {
                int p = (int) blk[0] + 48;
                if (blk[2] == 1 && b.getLong(p) == 0x48544f445441424cL) { // "HTODTABL"
                    long sa = b.getLong(p + 16);
                    long sb = b.getLong(p + 128 + 16);
                    int slot = sa >= sb ? 0 : 128;
                    tables.put(blk[0], new long[] {b.getLong(p + slot + 24), slot, b.getLong(p + slot + 32),
                            b.getLong(p + slot + 56)});
                }
            }
            long[] cat = tables.get(catalogAddress);
            if (cat == null) {
                return;
            }
            tableNames.put(cat[0], "(catalog)");
            for (long[] blk : blocks) {
                int p = (int) blk[0] + 48;
                if (blk[2] == 1 && b.getLong(p + 16) == cat[0]) {
                    int kl = b.getInt(p + 48);
                    String name = new String(b.array(), p + 64, kl, StandardCharsets.UTF_8);
                    long[] t = tables.get(address(b.getLong(p + 64 + kl)));
                    if (t != null) {
                        tableNames.put(t[0], name);
                    }
                }
            }
        }

        private long address(long handle) {
            return (handle >>> 24) * grain;
        }

        private void name(long addr, long size, boolean allocated) {
            int p = (int) addr + 48;
            long end = addr + size;
            if (!allocated) {
                add(p, end, "block.free", "");
                return;
            }
            long[] t = tables.get(addr);
            if (t != null) {
                String who = tableNames.getOrDefault(t[0], "?");
                String kind = who.equals("(catalog)") ? "catalog.header" : "table.header";
                add(p + t[1], p + t[1] + 128, kind + ".current", who);
                add(p + 128 - t[1], p + 256 - t[1], kind + ".older", who);
                for (long dir : new long[] {t[2], t[3]}) {
                    if (dir != 0) {
                        segments(address(dir), who);
                    }
                }
                return;
            }
            if (b.getLong(p) == 0x48544f4442444952L) { // "HTODBDIR"
                int count = b.getInt(p + 20);
                add(p, p + 24 + 8L * count + 4, "bucket.directory", "");
                return;
            }
            String table = tableNames.get(b.getLong(p + 16));
            if (table != null) {
                entry(p, table);
            }
        }

        /** Names each slot of the segments a directory lists. */
        private void segments(long dir, String who) {
            int p = (int) dir + 48;
            int shift = b.getInt(p + 16);
            int count = b.getInt(p + 20);
            String kind = who.equals("(catalog)") ? "catalog.slot" : "bucket.slot";
            for (int i = 0; i < count; i++) {
                long seg = address(b.getLong(p + 24 + 8 * i)) + 48;
                for (long s = 0; s < 1L << shift; s++) {
                    long at = seg + 16 * s; // handle, check, reserved
                    boolean used = b.getLong((int) at) != 0;
                    add(at, at + 16, kind + (used ? ".used" : ".empty"), who + " bucket " + ((long) i << shift | s));
                }
            }
        }

        /** Names the fields of the entry whose payload starts at {@code p}. */
        private void entry(int p, String table) {
            int kl = b.getInt(p + 48);
            int vl = b.getInt(p + 52);
            ByteBuffer key = ByteBuffer.wrap(Arrays.copyOfRange(b.array(), p + 64, p + 64 + kl));
            ByteBuffer value = ByteBuffer.wrap(Arrays.copyOfRange(b.array(), p + 64 + kl, p + 64 + kl + vl));
            String kind;
            if (table.equals("(catalog)")) {
                kind = "catalog.entry";
            } else {
                Model.MapModel<?, ?> m = truth.map(table);
                kind = m != null && value.equals(m.entries.get(key)) ? "entry" : "entry.dead";
            }
            String d = table + " " + Model.show(key);
            boolean dead = kind.equals("entry.dead");
            add(p, p + 12, dead ? kind : kind + ".next", d); // the link and its check
            add(p + 12, p + 16, dead ? kind : kind + ".crc", d); // head CRC
            add(p + 16, p + 24, dead ? kind : kind + ".tableId", d);
            add(p + 24, p + 32, dead ? kind : kind + ".hash", d);
            add(p + 32, p + 40, dead ? kind : kind + ".version", d);
            add(p + 40, p + 48, dead ? kind : kind + ".expiry", d);
            add(p + 48, p + 56, dead ? kind : kind + ".lengths", d);
            add(p + 56, p + 60, dead ? kind : kind + ".crc", d); // value CRC
            add(p + 64, p + 64 + kl, dead ? kind : kind + ".key", d);
            add(p + 64 + kl, p + 64 + kl + vl, dead ? kind : kind + ".value", d);
        }
    }
}
