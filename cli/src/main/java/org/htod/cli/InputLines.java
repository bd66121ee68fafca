package org.htod.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The lines of an import's input, each decoded as strict UTF-8 on its own. A {@code
 * BufferedReader} decodes ahead of the line it returns, so its error ("Input length = 1") names
 * neither the file nor the line; here bytes that are not UTF-8 are reported with both, and the
 * byte within the line. Lines end at {@code \n}, which never occurs inside a UTF-8 sequence; a
 * {@code \r} before it is dropped.
 */
final class InputLines implements AutoCloseable {
    private final Path file;
    private final InputStream in;
    private final byte[] chunk = new byte[1 << 16];
    private int at;
    private int end;
    private byte[] line = new byte[256];
    private long number;

    InputLines(Path file) throws IOException {
        this.file = file;
        this.in = Files.newInputStream(file);
    }

    /** The number of the line {@link #next} returned last, from 1. */
    long number() {
        return number;
    }

    /**
     * The next line, without its line end; null at the end of the file.
     *
     * @throws Exit.BadInputException if it is not UTF-8
     */
    String next() throws IOException {
        int len = 0;
        boolean any = false;
        while (true) {
            if (at == end) {
                end = in.read(chunk);
                at = 0;
                if (end <= 0) {
                    end = 0;
                    if (!any) {
                        return null;
                    }
                    break;
                }
            }
            any = true;
            int from = at;
            while (at < end && chunk[at] != '\n') {
                at++;
            }
            int n = at - from;
            if ((long) len + n > Integer.MAX_VALUE - 8) {
                throw new Exit.BadInputException(file + " line " + (number + 1) + ": longer than 2 GiB, more than"
                        + " any entry takes", null);
            }
            if (len + n > line.length) {
                line = Arrays.copyOf(line, Math.max(len + n, (int) Math.min(Integer.MAX_VALUE - 8, 2L * line.length)));
            }
            System.arraycopy(chunk, from, line, len, n);
            len += n;
            if (at < end) {
                at++; // the \n
                break;
            }
        }
        number++;
        if (len > 0 && line[len - 1] == '\r') {
            len--;
        }
        return decode(len);
    }

    private String decode(int len) {
        CharsetDecoder d = StandardCharsets.UTF_8.newDecoder(); // reports malformed input by default
        ByteBuffer bytes = ByteBuffer.wrap(line, 0, len);
        CharBuffer chars = CharBuffer.allocate(len); // UTF-8 never decodes to more chars than bytes
        CoderResult r = d.decode(bytes, chars, true);
        if (!r.isError()) {
            r = d.flush(chars);
        }
        if (r.isError()) {
            int bad = Math.min(bytes.position(), len - 1);
            throw new Exit.BadInputException(file + " line " + number + ": not UTF-8 (byte " + (bad + 1)
                    + " of the line is 0x" + String.format("%02x", line[bad] & 0xff) + "); export writes UTF-8,"
                    + " with keys and values that are not UTF-8 in base64 under key64 and value64", null);
        }
        return chars.flip().toString();
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
