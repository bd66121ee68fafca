package org.htod.integrity;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * One damage done to a copy of a store image, drawn from a seed: bytes flipped (1 to 16), a
 * 512- or 4096-byte sector zeroed, the image truncated, or garbage appended. Three in four are
 * aimed at a structure of the image (an entry field, a bucket slot, a table header slot, a catalog
 * entry, a superblock copy, ...), the others fall anywhere.
 */
final class Damage {
    enum Kind { FLIP, ZERO_SECTOR, TRUNCATE, APPEND }

    /** Structures aimed at, by prefix of {@link ImageMap.Region#structure()}, and how often. */
    private static final Object[][] AIMS = {
        {"entry.key", 10}, {"entry.value", 4}, {"entry.crc", 3}, {"entry.hash", 6}, {"entry.expiry", 5},
        {"entry.lengths", 4}, {"entry.tableId", 2}, {"entry.version", 2}, {"entry.next", 6},
        {"bucket.slot.used", 10}, {"bucket.slot.empty", 2}, {"table.header.current", 6}, {"table.header.older", 2},
        {"bucket.directory", 3}, {"catalog.", 7}, {"superblock.current", 5}, {"superblock.older", 2},
        {"heap.checkpoint.record", 3}, {"block.header", 4}, {"snapshot", 2}, {"block.free", 1}, {"entry.dead", 1},
        {"past.tail", 1}, {"superblock.padding", 1},
    };

    final Kind kind;
    /** What was aimed at: a structure prefix, or "anywhere". */
    final String aim;
    /** FLIP: the offsets; ZERO_SECTOR: the sector's first byte; TRUNCATE: the new length; APPEND: the old length. */
    final long[] offsets;
    /** FLIP: the XOR mask of each offset; ZERO_SECTOR: the sector size; APPEND: the garbage. */
    final byte[] data;
    /** The structure hit first, for tallies. */
    String primary;

    private Damage(Kind kind, String aim, long[] offsets, byte[] data) {
        this.kind = kind;
        this.aim = aim;
        this.offsets = offsets;
        this.data = data;
    }

    static Damage flips(String aim, long[] offsets, byte[] masks) {
        return new Damage(Kind.FLIP, aim, offsets, masks);
    }

    static Damage zeroSector(String aim, long offset, int sector) {
        return new Damage(Kind.ZERO_SECTOR, aim, new long[] {offset / sector * sector}, new byte[sector]);
    }

    static Damage truncate(String aim, long length) {
        return new Damage(Kind.TRUNCATE, aim, new long[] {length}, new byte[0]);
    }

    static Damage append(String aim, long at, byte[] garbage) {
        return new Damage(Kind.APPEND, aim, new long[] {at}, garbage);
    }

    static Damage draw(SplittableRandom r, byte[] image, ImageMap map) {
        ImageMap.Region target = null;
        String aim = "anywhere";
        if (r.nextInt(4) != 0) {
            int total = 0;
            for (Object[] a : AIMS) {
                total += map.all((String) a[0]).isEmpty() ? 0 : (Integer) a[1];
            }
            int pick = r.nextInt(total);
            for (Object[] a : AIMS) {
                List<ImageMap.Region> rs = map.all((String) a[0]);
                if (!rs.isEmpty() && (pick -= (Integer) a[1]) < 0) {
                    aim = (String) a[0];
                    target = rs.get(r.nextInt(rs.size()));
                    break;
                }
            }
        }
        long from = target == null ? 0 : target.start();
        long to = target == null ? image.length : target.end();
        int dice = r.nextInt(100);
        if (dice < 55) {
            int n = r.nextInt(2) == 0 ? 1 : r.nextInt(3) == 0 ? 5 + r.nextInt(12) : 2 + r.nextInt(3);
            n = (int) Math.min(n, to - from);
            TreeSet<Long> at = new TreeSet<>();
            while (at.size() < n) {
                at.add(from + (long) (r.nextDouble() * (to - from)));
            }
            byte[] masks = new byte[n];
            for (int i = 0; i < n; i++) {
                masks[i] = (byte) (1 + r.nextInt(255));
            }
            return flips(aim, at.stream().mapToLong(Long::longValue).toArray(), masks);
        }
        long offset = from + (long) (r.nextDouble() * (to - from));
        if (dice < 77) {
            return zeroSector(aim, offset, r.nextBoolean() ? 512 : 4096);
        }
        if (dice < 90) {
            return truncate(aim, r.nextInt(8) == 0 ? from : offset);
        }
        byte[] garbage = new byte[1 + r.nextInt(r.nextBoolean() ? 64 : 65536)];
        if (r.nextBoolean() || image.length <= garbage.length) {
            r.nextBytes(garbage);
        } else {
            int src = r.nextInt(image.length - garbage.length);
            System.arraycopy(image, src, garbage, 0, garbage.length); // old structures where none should be
        }
        return append("garbage", image.length, garbage);
    }

    /** A damaged copy of {@code image}. */
    byte[] apply(byte[] image) {
        switch (kind) {
            case FLIP: {
                byte[] out = image.clone();
                for (int i = 0; i < offsets.length; i++) {
                    out[(int) offsets[i]] ^= data[i];
                }
                return out;
            }
            case ZERO_SECTOR: {
                byte[] out = image.clone();
                int start = (int) Math.min(offsets[0], out.length);
                Arrays.fill(out, start, (int) Math.min(out.length, offsets[0] + data.length), (byte) 0);
                return out;
            }
            case TRUNCATE:
                return Arrays.copyOf(image, (int) Math.min(offsets[0], image.length));
            default: {
                byte[] out = Arrays.copyOf(image, image.length + data.length);
                System.arraycopy(data, 0, out, image.length, data.length);
                return out;
            }
        }
    }

    /** The structures hit, in the order of the bytes. */
    Set<String> hits(ImageMap map) {
        Set<String> out = new LinkedHashSet<>();
        switch (kind) {
            case FLIP:
                for (long o : offsets) {
                    out.add(map.at(o).structure());
                }
                break;
            case ZERO_SECTOR:
                for (long o = offsets[0]; o < Math.min(map.length, offsets[0] + data.length); o++) {
                    out.add(map.at(o).structure());
                }
                break;
            case TRUNCATE:
                out.add(map.at(offsets[0]).structure());
                break;
            default:
                out.add("garbage");
        }
        return out;
    }

    /**
     * Structures by how much a reader depends on them, most first: the one of these a damage hits
     * first names it in the tallies (a zeroed sector over a superblock copy and its padding is
     * superblock damage).
     */
    private static final String[] RANK = {
        "superblock.current", "superblock.older", "heap.checkpoint.record", "catalog.header.current", "catalog.slot.used",
        "catalog.entry", "table.header.current", "bucket.directory", "bucket.slot.used", "entry.next", "entry.hash",
        "entry.expiry", "entry.key", "entry.lengths", "entry.tableId", "entry.version", "entry.value", "entry.crc",
        "block.header", "snapshot", "catalog.header.older", "table.header.older", "catalog.slot.empty",
        "bucket.slot.empty", "entry.dead", "block.free", "superblock.padding", "heap.checkpoint.padding", "unnamed",
        "past.tail", "past.end",
        "garbage",
    };

    /** Tally key: the structure of highest rank the damage hit. */
    String primary(ImageMap map) {
        if (primary == null) {
            Set<String> h = hits(map);
            primary = h.isEmpty() ? "nothing" : h.iterator().next();
            for (String r : RANK) {
                String found = h.stream().filter(x -> x.startsWith(r)).findFirst().orElse(null);
                if (found != null) {
                    primary = found;
                    break;
                }
            }
        }
        return primary;
    }

    /** Offsets, bytes before and after, and the region of each, for a failure message. */
    String describe(byte[] image, ImageMap map) {
        StringBuilder s = new StringBuilder();
        switch (kind) {
            case FLIP:
                s.append(offsets.length).append(" byte(s) flipped (aimed at ").append(aim).append("):");
                for (int i = 0; i < offsets.length; i++) {
                    int o = (int) offsets[i];
                    s.append(String.format("%n      offset %d: 0x%02x -> 0x%02x in %s", o, image[o] & 0xff,
                            (image[o] ^ data[i]) & 0xff, map.at(o)));
                }
                break;
            case ZERO_SECTOR:
                s.append(data.length).append("-byte sector at offset ").append(offsets[0]).append(" zeroed (aimed at ")
                        .append(aim).append("), hitting ").append(hits(map)).append(", first ").append(map.at(offsets[0]));
                break;
            case TRUNCATE:
                s.append("truncated from ").append(image.length).append(" to ").append(offsets[0]).append(" bytes (aimed at ")
                        .append(aim).append("), cut in ").append(map.at(offsets[0]));
                break;
            default:
                s.append(data.length).append(" bytes of garbage appended at ").append(offsets[0]);
        }
        return s.toString();
    }
}
