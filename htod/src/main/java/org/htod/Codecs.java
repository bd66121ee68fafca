package org.htod;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** The built-in codecs. */
final class Codecs {
    private Codecs() {}

    static final Codec<String> STRING = new Codec<>() {
        @Override
        public byte[] encode(String value) {
            return value.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return "Codec.string()";
        }
    };

    static final Codec<byte[]> BYTES = new Codec<>() {
        @Override
        public byte[] encode(byte[] value) {
            return value;
        }

        @Override
        public byte[] decode(byte[] bytes) {
            return bytes;
        }

        @Override
        public String toString() {
            return "Codec.bytes()";
        }
    };

    static final Codec<Long> LONGS = new Codec<>() {
        @Override
        public byte[] encode(Long value) {
            return ByteBuffer.allocate(8).putLong(0, value).array();
        }

        @Override
        public Long decode(byte[] bytes) {
            if (bytes.length != 8) {
                throw new IllegalArgumentException("a long is 8 bytes, found " + bytes.length);
            }
            return ByteBuffer.wrap(bytes).getLong();
        }

        @Override
        public String toString() {
            return "Codec.longs()";
        }
    };

    static final Codec<Integer> INTS = new Codec<>() {
        @Override
        public byte[] encode(Integer value) {
            return ByteBuffer.allocate(4).putInt(0, value).array();
        }

        @Override
        public Integer decode(byte[] bytes) {
            if (bytes.length != 4) {
                throw new IllegalArgumentException("an int is 4 bytes, found " + bytes.length);
            }
            return ByteBuffer.wrap(bytes).getInt();
        }

        @Override
        public String toString() {
            return "Codec.ints()";
        }
    };
}
