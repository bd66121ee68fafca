package org.htod;

/**
 * Turns keys or values into bytes and back. Keys are hashed and compared by their encoded bytes,
 * so a key codec must encode equal keys to equal bytes. Values are compared by their encoded bytes
 * too, where the map compares values ({@code containsValue}, {@code remove(key, value)}, {@code
 * replace(key, old, new)}, the entry set's {@code contains} and {@code remove}).
 *
 * <p>Built-ins: {@link #string()}, {@link #bytes()}, {@link #longs()}, {@link #ints()}; {@link
 * JacksonCodec} for records and other objects Jackson can map (needs jackson-databind on the
 * class or module path).
 *
 * <p>A codec run while a change is decided, under the key's lock (a {@code compute}'s new value
 * encoded, the stored value decoded for its function), may read the store and must not change
 * it, as a function given to {@code compute} (see {@link HtodMap}).
 */
public interface Codec<T> {
    /** The bytes of {@code value}, which is never null. */
    byte[] encode(T value);

    /** The object whose bytes are {@code bytes}. */
    T decode(byte[] bytes);

    /** UTF-8. */
    static Codec<String> string() {
        return Codecs.STRING;
    }

    /**
     * The bytes themselves. Keys compare by content, as do values wherever the map compares
     * values; but {@code equals} and {@code hashCode} of the map itself, which {@code Map}
     * defines over its entries' {@code equals}, see byte arrays by identity.
     */
    static Codec<byte[]> bytes() {
        return Codecs.BYTES;
    }

    /** 8 bytes, big-endian. */
    static Codec<Long> longs() {
        return Codecs.LONGS;
    }

    /** 4 bytes, big-endian. */
    static Codec<Integer> ints() {
        return Codecs.INTS;
    }
}
