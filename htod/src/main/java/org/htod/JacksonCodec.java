package org.htod;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Objects;
import org.htod.core.HtodException;

/**
 * JSON through Jackson, for records and POJOs. Jackson is an optional dependency of htod: this
 * class needs jackson-databind at run time, nothing else in htod does.
 *
 * <p>Equal objects must serialize to equal bytes for this codec to be used for keys, or for
 * values where the map compares them; Jackson's default field order makes that so for records.
 */
public final class JacksonCodec<T> implements Codec<T> {
    private static final class Default {
        static final ObjectMapper MAPPER = new ObjectMapper();
    }

    private final ObjectMapper mapper;
    private final Class<T> type;

    private JacksonCodec(ObjectMapper mapper, Class<T> type) {
        this.mapper = mapper;
        this.type = type;
    }

    /** A codec for {@code type} with a default {@code ObjectMapper}. */
    public static <T> JacksonCodec<T> of(Class<T> type) {
        return new JacksonCodec<>(Default.MAPPER, Objects.requireNonNull(type, "type"));
    }

    /**
     * A codec for {@code type} with the caller's mapper (modules, naming, features). Jackson's
     * module is a static (optional) requirement of htod, so a caller of this method requires it
     * itself.
     */
    @SuppressWarnings("exports")
    public static <T> JacksonCodec<T> of(Class<T> type, ObjectMapper mapper) {
        return new JacksonCodec<>(Objects.requireNonNull(mapper, "mapper"), Objects.requireNonNull(type, "type"));
    }

    @Override
    public byte[] encode(T value) {
        try {
            return mapper.writeValueAsBytes(type.cast(value));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot write " + type.getName() + " as JSON: " + e.getMessage(), e);
        }
    }

    @Override
    public T decode(byte[] bytes) {
        try {
            return mapper.readValue(bytes, type);
        } catch (IOException e) {
            throw new HtodException("cannot read a " + type.getName() + " from the " + bytes.length
                    + " stored bytes: " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "JacksonCodec.of(" + type.getName() + ")";
    }
}
