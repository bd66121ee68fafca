package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An open that fails with an {@code Error} (an {@code OutOfMemoryError} in a recovery, here one
 * thrown by the progress listener a recovery calls) releases the file: opening it again in the
 * same process works, and finds the store whole. The open used to close the device only for a
 * {@code RuntimeException}, so the file stayed locked for the process's life.
 */
class FailedOpenReleasesTest {
    @ParameterizedTest(name = "direct mode {0}")
    @ValueSource(booleans = {false, true})
    void anOpenFailingWithAnErrorLeavesTheFileToOpenAgain(boolean direct) throws Exception {
        Path file = TestStores.tempFile("failed-open");
        Path crashed = TestStores.tempFile("failed-open-crashed");
        try {
            InstantCopyDevice dev = InstantCopyDevice.on(file);
            try (HtodStore s = Htod.builder(dev).directMode(direct).durability(Durability.SYNC).open()) {
                HtodMap<Integer, String> m = s.map("m", Codec.ints(), Codec.string());
                for (int i = 0; i < 2_000; i++) {
                    m.put(i, "v" + i);
                }
                // The file as a process killed now leaves it: every put synced, the store open.
                dev.copyTo(crashed);
            }
            Htod.Builder failing = Htod.builder(crashed).directMode(direct).progress((done, total) -> {
                throw new OutOfMemoryError("thrown by the test's progress listener");
            });
            assertThrows(OutOfMemoryError.class, failing::open);
            try (HtodStore again = Htod.builder(crashed).directMode(direct).open()) {
                assertFalse(again.recoveryReport().clean(), "the copy was taken from an open store");
                HtodMap<Integer, String> m = again.map("m", Codec.ints(), Codec.string());
                assertEquals(2_000, m.size());
                assertEquals("v1999", m.get(1999));
            }
        } finally {
            TestStores.delete(file);
            TestStores.delete(crashed);
        }
    }
}
