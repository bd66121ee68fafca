package org.htod.integrity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Damaged copies of real stores, read whole: every answer must be the truth or a typed error.
 *
 * <p>The images ({@link FuzzImages}) are stores of about 400 entries in five maps, of each storage
 * method, closed cleanly, synced and left open, or cut by a power loss. Each case takes one image
 * (case number modulo the images), damages a copy as its seed says ({@link Damage}: bytes
 * flipped, a sector zeroed, a truncation, garbage appended; mostly aimed at a structure found by
 * {@link ImageMap}), opens it and asks everything ({@link StoreCheck}). A case fails on a wrong
 * answer, a throwable that is not an {@code HtodException}, a refused open that wrote to the
 * image, or a case that does not end within {@value #TIMEOUT_MILLIS} ms.
 *
 * <p>{@code -Dhtod.test.scale=N} runs N times the cases; {@code -Dhtod.fuzz.seed=S} changes the
 * base seed, {@code -Dhtod.fuzz.cases=N} the number of cases; {@code -Dhtod.fuzz.case=I} runs case I alone, printing its damage and verdict. A case
 * replays with the same base seed and index (store and table ids are random, so the bytes of a
 * replay differ from the first run's, the layout and the damage do not).
 */
class CorruptionFuzzTest {
    static final long BASE_SEED = Long.getLong("htod.fuzz.seed", 0xF022_0000_0000L);
    static final int CASES = Integer.getInteger("htod.fuzz.cases", 10_000 * Integer.getInteger("htod.test.scale", 1));
    static final long TIMEOUT_MILLIS = 20_000;
    private static final int THREADS = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));

    @Test
    void undamagedImagesReadBackWhole() {
        for (Images.Image img : FuzzImages.all()) {
            Verdict v = StoreCheck.run(img.bytes(), img.truth(), 1 << 20, new Verdict());
            assertTrue(!v.failed() && !v.refused() && v.typed == 0, img.spec().name() + ": " + v);
            assertTrue(img.truth().entryCount() > 300, img.spec().name() + " holds " + img.truth().entryCount());
            // A log image may hold its entries in the log only, not yet installed: the fuzz then
            // damages the log; a direct image holds them in the tables.
            int slots = img.map().all("bucket.slot.used").size();
            int entries = img.map().all("entry.key").size();
            if (img.spec().direct()) {
                assertTrue(slots > 100, img.spec().name() + ": " + slots + " bucket slots found");
                assertTrue(entries > 300, img.spec().name() + ": " + entries + " entries found");
            } else {
                assertFalse(img.map().all("log").isEmpty(), img.spec().name() + ": no log region found");
            }
        }
    }

    @Test
    void everyDamagedStoreAnswersRightOrThrowsATypedError() throws Exception {
        List<Images.Image> images = FuzzImages.all();
        Integer only = Integer.getInteger("htod.fuzz.case");
        FuzzTally tally = new FuzzTally();
        long t0 = System.nanoTime();
        CaseRunner runner = new CaseRunner(THREADS, TIMEOUT_MILLIS, 6);
        int count = only == null ? CASES : 1;
        runner.run(count, (i, v) -> {
            int index = only == null ? i : only;
            Images.Image img = images.get(index % images.size());
            long seed = BASE_SEED + index;
            SplittableRandom r = new SplittableRandom(seed);
            Damage d = Damage.draw(r, img.bytes(), img.map());
            long cache = r.nextBoolean() ? 0 : 1 << 20;
            StoreCheck.run(d.apply(img.bytes()), img.truth(), cache, v);
        }, (i, v) -> {
            int index = only == null ? i : only;
            Images.Image img = images.get(index % images.size());
            SplittableRandom r = new SplittableRandom(BASE_SEED + index);
            Damage d = Damage.draw(r, img.bytes(), img.map());
            String id = "case " + index + " [" + img.spec().kind() + " " + img.spec().method() + "]";
            String full = id + " (replay: -Dhtod.fuzz.case=" + index + " -Dhtod.fuzz.seed=0x" + Long.toHexString(BASE_SEED)
                    + ") image " + img.spec().name() + String.format("%n    damage: ") + d.describe(img.bytes(), img.map())
                    + String.format("%n    verdict: ") + v;
            if (only != null) {
                System.out.println(full);
            }
            tally.add(d, d.primary(img.map()), v, id, full);
        });
        long ms = (System.nanoTime() - t0) / 1_000_000;
        String report = tally.report(String.format("corruption fuzz: %d cases of %d images, base seed 0x%x, %d threads,"
                + " %d ms, %d hang(s)", tally.cases(), images.size(), BASE_SEED, THREADS, ms, runner.hangs()));
        System.out.println(report);
        assertEquals(0, tally.failures(), report);
        assertEquals(count, tally.cases(), "stopped early after " + runner.hangs() + " hangs\n" + report);
    }
}
