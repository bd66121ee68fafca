package org.htod;

/**
 * One entry of a store as bytes, with what a plain map view does not show: when it expires and
 * its version. What {@link HtodStore#entries} reads and {@link HtodStore#load} writes, so that an
 * export and an import, or a copy, keep an entry whole.
 *
 * @param map the map's name
 * @param key the key's encoded bytes
 * @param value the value's encoded bytes
 * @param expiresAt epoch milliseconds after which the entry is dead; 0 for never
 * @param version the entry's version (1 for a key put once; see {@link HtodMap#putVersioned})
 */
public record StoreEntry(String map, byte[] key, byte[] value, long expiresAt, long version) {
    public StoreEntry {
        java.util.Objects.requireNonNull(map, "map");
        java.util.Objects.requireNonNull(key, "key");
        java.util.Objects.requireNonNull(value, "value");
        if (expiresAt < 0 || version < 0) {
            throw new IllegalArgumentException("expiresAt and version are at least 0, found " + expiresAt + " and " + version);
        }
    }
}
