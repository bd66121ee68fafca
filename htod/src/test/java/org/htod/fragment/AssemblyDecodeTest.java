package org.htod.fragment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import org.htod.core.HtodException;
import org.junit.jupiter.api.Test;

/**
 * An assembled fragment's spans are checked when it is read (docs/FORMAT.md): a span outside its
 * text, or before the span ahead of it, made the next reconstruction throw an untyped
 * StringIndexOutOfBoundsException; it is a typed error naming the page and the span now.
 */
class AssemblyDecodeTest {

    @Test
    void spansOutsideTheTextOrOutOfOrderAreRefusedWhenRead() {
        String source = "<p><!--#include virtual=\"/a\" --> and <!--#include virtual=\"/b\" --></p>";
        List<Include> includes = FragmentCache.includes(source);
        Assembly a = Assembly.assemble(source, includes, p -> p.equals("/a") ? "AAAA" : "BB", 1 << 20, "/page");
        byte[] ok = a.encode();
        Assembly back = Assembly.decode("/page", ok);
        assertEquals(a.text, back.text);
        assertEquals("<p>AAAA and XX</p>", back.reconstruct(Set.of("/b"), p -> "XX", 1 << 20, "/page").text);
        // The first span's start and length are at bytes 5..12; the second's follow its path ("/a").
        int second = 5 + 10 + 2;
        int[][] bad = {
            {5, 1_000, 9, 4}, // the first span starting past the text
            {5, 3, 9, 1_000}, // the first span running past the text
            {5, 3, 9, -1}, // a negative length
            {second, 4, second + 4, 2}, // the second span starting inside the first
        };
        for (int[] b : bad) {
            ByteBuffer v = ByteBuffer.wrap(ok.clone());
            v.putInt(b[0], b[1]).putInt(b[2], b[3]);
            HtodException e = assertThrows(HtodException.class, () -> Assembly.decode("/page", v.array()),
                    "start " + b[1] + ", length " + b[3]);
            assertTrue(e.getMessage().contains("/page") && e.getMessage().contains("span"), e.getMessage());
        }
    }
}
