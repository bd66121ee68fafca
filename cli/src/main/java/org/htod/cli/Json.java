package org.htod.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.htod.Htod;

/** The tool's JSON: durations as ISO-8601 text ({@code PT0.012S}); bytes as text or base64. */
final class Json {
    private Json() {}

    static final ObjectMapper MAPPER = new ObjectMapper()
            .registerModule(new SimpleModule().addSerializer(Duration.class, ToStringSerializer.instance))
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

    /**
     * The longest string a line of an import may hold: the largest value a store takes, in base64
     * (text is never longer than its UTF-8 bytes). Jackson's default stops at 20,000,000
     * characters, which refused a value of about 19 MiB that a direct-mode store holds.
     */
    static final int MAX_STRING = (int) ((Htod.MAX_VALUE_BYTES + 2L) / 3 * 4);

    /**
     * Reads the lines of an import: strings up to {@link #MAX_STRING}, and nothing after a line's
     * value (two objects on one line would otherwise give the first and drop the second).
     */
    static final ObjectMapper LINES = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(MAX_STRING).build()).build())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    /** {@code bytes} as a string if they are well-formed UTF-8 (which encodes back to the same bytes), else null. */
    static String text(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
