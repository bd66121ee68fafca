package org.htod.integrity;

import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.htod.Codec;

/**
 * What a store holds, map by map, as encoded bytes: the truth a damaged copy is read against.
 * Keys and values are kept as read-only {@link ByteBuffer}s so that they compare by content
 * whatever the codec.
 */
final class Model {
    /** Every store of these tests runs on this clock: entries with a time to live stay alive. */
    static final Clock CLOCK = Clock.fixed(Instant.ofEpochMilli(1_700_000_000_000L), ZoneOffset.UTC);

    final List<MapModel<?, ?>> maps = new ArrayList<>();

    /** One map: its codecs, its entries, and probes (keys it must not hold). */
    static final class MapModel<K, V> {
        final String name;
        final Codec<K> keys;
        final Codec<V> values;
        final Map<ByteBuffer, ByteBuffer> entries = new LinkedHashMap<>();
        final List<ByteBuffer> probes = new ArrayList<>();

        MapModel(String name, Codec<K> keys, Codec<V> values) {
            this.name = name;
            this.keys = keys;
            this.values = values;
        }

        K key(ByteBuffer b) {
            return keys.decode(bytes(b));
        }

        V value(ByteBuffer b) {
            return values.decode(bytes(b));
        }

        ByteBuffer keyBytes(K k) {
            return wrap(keys.encode(k));
        }

        ByteBuffer valueBytes(V v) {
            return wrap(values.encode(v));
        }

        MapModel<K, V> emptyCopy() {
            return new MapModel<>(name, keys, values);
        }
    }

    static ByteBuffer wrap(byte[] b) {
        return ByteBuffer.wrap(b).asReadOnlyBuffer();
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    MapModel<?, ?> map(String name) {
        for (MapModel<?, ?> m : maps) {
            if (m.name.equals(name)) {
                return m;
            }
        }
        return null;
    }

    List<String> names() {
        List<String> out = new ArrayList<>();
        maps.forEach(m -> out.add(m.name));
        return out;
    }

    int entryCount() {
        int n = 0;
        for (MapModel<?, ?> m : maps) {
            n += m.entries.size();
        }
        return n;
    }

    /** Short printable form of a key for messages: text if it is text, else hex, cut to 40 characters. */
    static String show(ByteBuffer b) {
        byte[] a = bytes(b);
        boolean text = true;
        for (byte x : a) {
            text &= x >= 32 && x < 127;
        }
        StringBuilder s = new StringBuilder();
        if (text) {
            s.append('"').append(new String(a, java.nio.charset.StandardCharsets.US_ASCII)).append('"');
        } else {
            s.append("0x");
            for (byte x : a) {
                s.append(String.format("%02x", x));
            }
        }
        return s.length() > 40 ? s.substring(0, 37) + "...(" + a.length + " bytes)" : s.toString();
    }
}
