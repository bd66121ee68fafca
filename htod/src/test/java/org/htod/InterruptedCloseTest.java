package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A store in a file closed from an interrupted thread (an application's shutdown hook, a
 * container stopping on an interrupted worker): the close does all its work, keeps the caller's
 * interrupt, and the file opens again in the same process with every change. In direct mode at
 * ASYNC the close used to give up on its wait for the background sync, throw, and leave the
 * tables open and the file locked for the process's life (a second close returned at once); in
 * log mode it gave up on its wait for the flusher and closed the log under it.
 */
class InterruptedCloseTest {
    @ParameterizedTest(name = "direct mode {0}")
    @ValueSource(booleans = {false, true})
    void aCloseFromAnInterruptedThreadClosesTheFileWithEveryChange(boolean direct) throws Exception {
        Path file = TestStores.tempFile("interrupted-close");
        try {
            HtodStore s = Htod.builder(file).directMode(direct).durability(Durability.ASYNC).open();
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            for (int i = 0; i < 500; i++) {
                m.put("k" + i, "v" + i);
            }
            Thread.currentThread().interrupt();
            try {
                s.close();
                assertTrue(Thread.currentThread().isInterrupted(), "the caller's interrupt is kept");
            } finally {
                Thread.interrupted();
            }
            try (HtodStore again = Htod.builder(file).directMode(direct).open()) {
                assertTrue(again.recoveryReport().clean(), "closed cleanly: " + again.recoveryReport());
                HtodMap<String, String> r = again.map("m", Codec.string(), Codec.string());
                assertEquals(500, r.size());
                for (int i = 0; i < 500; i++) {
                    assertEquals("v" + i, r.get("k" + i));
                }
            }
        } finally {
            TestStores.delete(file);
        }
    }
}
