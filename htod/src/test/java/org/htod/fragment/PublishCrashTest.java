package org.htod.fragment;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.htod.Codec;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.LayerAccess;
import org.htod.VerifyReport;
import org.htod.core.HtodException;
import org.htod.core.device.BlockDevice;
import org.htod.core.device.CrashDevice;
import org.htod.core.device.CrashDevice.Counting;
import org.htod.core.device.CrashDevice.CutWrite;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;

/**
 * A publish is all or nothing across a crash in log mode: power is cut at every write and sync
 * the publish makes (the write at the cut lost, or in flight and then kept whole, torn or not at
 * all, with several seeds for what the crash keeps of the unsynced writes), the store is reopened,
 * and every map of the cache (sources, assemblies, expiry table, the graph's nodes and edge
 * buckets) must hold, byte for byte, either exactly what it held before the publish or exactly
 * what it holds after it. The publish changes a fragment included by 60 pages (its dependents live
 * in edge buckets), publishes a new fragment, unpublishes one, changes a page's includes and sets
 * a time to live, so one unit writes and removes in all five maps.
 */
class PublishCrashTest {
    private static final int PAGES = 60;
    private static final String[] MAPS = {"site.cache1", "site.cache2", "site.expiry", "site.odg.nodes", "site.odg.edges"};
    /** One clock for the reference run and the crashed ones, so that expiry times agree. */
    private static final Clock FIXED = Clock.fixed(Instant.ofEpochMilli(1_700_000_000_000L), ZoneOffset.UTC);

    /** Every run's tables hash under the same keys, so that the crashed runs make the reference run's writes. */
    private static Htod.Builder builder(BlockDevice dev) {
        return LayerAccess.hashKeySeed(Htod.builder(dev), 1).grain(64).logSize(4 << 20).durability(Durability.NONE);
    }

    private static List<Change> before() {
        List<Change> out = new ArrayList<>();
        out.add(Change.publish("/results/slalom.html", "<td>1. Kostelic 1:42.10</td>" + "<td>rest of the field</td>".repeat(20)));
        out.add(Change.publish("/results/old.html", "<td>withdrawn</td>"));
        out.add(Change.publish("/sport/ski.html", "<h1>Ski</h1><!--#include virtual=\"/results/slalom.html\" -->"));
        for (int i = 0; i < PAGES; i++) {
            out.add(Change.publish("/page/" + i + ".html", "<html><h2>page " + i + "</h2>" + "<p>filler</p>".repeat(20)
                    + "<!--#include virtual=\"/sport/ski.html\" -->"
                    + "<!--#include virtual=\"/results/slalom.html\" -->"
                    + (i % 10 == 0 ? "<!--#include virtual=\"/results/old.html\" -->" : "") + "</html>"));
        }
        return out;
    }

    private static List<Change> publish() {
        return List.of(
                Change.publish("/results/slalom.html", "<td>1. Maier 1:41.98</td>" + "<td>rest of the field</td>".repeat(20)),
                Change.publish("/results/giant.html", "<td>1. Hirscher</td>", Duration.ofDays(1)),
                Change.unpublish("/results/old.html"),
                Change.publish("/page/7.html", "<html><!--#include virtual=\"/results/giant.html\" -->"
                        + "<!--#include virtual=\"/sport/ski.html\" --></html>"));
    }

    /** Every entry of every map of the cache, keys and values as Base64. */
    private static Map<String, Map<String, String>> state(HtodStore store) {
        Map<String, Map<String, String>> out = new TreeMap<>();
        Base64.Encoder b64 = Base64.getEncoder();
        for (String name : MAPS) {
            HtodMap<byte[], byte[]> m = store.map(name, Codec.bytes(), Codec.bytes());
            Map<String, String> entries = new TreeMap<>();
            for (Map.Entry<byte[], byte[]> e : m.entrySet()) {
                entries.put(b64.encodeToString(e.getKey()), b64.encodeToString(e.getValue()));
            }
            out.put(name, entries);
        }
        return out;
    }

    /** The states before and after the publish, from a store that never crashed. */
    private static List<Map<String, Map<String, String>>> reference() {
        try (HtodStore store = builder(new MemoryDevice()).clock(FIXED).open()) {
            FragmentCache c = FragmentCache.open(store, "site", FIXED);
            c.apply(before());
            Map<String, Map<String, String>> old = state(store);
            c.apply(publish());
            return List.of(old, state(store));
        }
    }

    private enum Outcome { BEFORE, AFTER }

    @Test
    void aPublishIsAllOrNothingAcrossACrash() {
        List<Map<String, Map<String, String>>> ref = reference();
        assertTrue(!ref.get(0).equals(ref.get(1)), "the publish changes the maps");
        Map<Outcome, Integer> seen = new TreeMap<>();
        int points = 0;
        boolean reachedTheEnd = false;
        for (long n = 1; n <= 500 && !reachedTheEnd; n++) {
            for (CutWrite atCut : CutWrite.values()) {
                for (long seed = 0; seed < 4; seed++) {
                    Outcome o = point(n, atCut, seed, ref);
                    if (o == null) {
                        reachedTheEnd = true; // the publish made fewer than n writes and syncs
                        break;
                    }
                    seen.merge(o, 1, Integer::sum);
                    points++;
                }
                if (reachedTheEnd) {
                    break;
                }
            }
        }
        System.out.println(points + " crash points in one publish, outcomes: " + seen);
        assertTrue(reachedTheEnd, "the publish completed without a cut within 500 writes and syncs");
        assertTrue(seen.getOrDefault(Outcome.BEFORE, 0) > 0, "no crash left the state before the publish: " + seen);
        assertTrue(seen.getOrDefault(Outcome.AFTER, 0) > 0, "no crash left the state after the publish: " + seen);
    }

    /**
     * Cuts power at the {@code n}-th write or sync of the publish; returns which state the reopened
     * store holds, or null if the publish was acknowledged before the cut (and the reopened store
     * holds it, since an acknowledged publish is durable).
     */
    private static Outcome point(long n, CutWrite atCut, long seed, List<Map<String, Map<String, String>>> ref) {
        MemoryDevice disk = new MemoryDevice();
        CrashDevice dev = new CrashDevice(disk);
        HtodStore store = builder(dev).clock(FIXED).open();
        String where = "cut at " + n + " (" + atCut + "), crash seed " + seed;
        boolean acknowledged = false;
        try {
            FragmentCache c = FragmentCache.open(store, "site", FIXED);
            c.apply(before());
            store.checkpoint(); // the write buffer installed: the cut falls among the publish's own writes
            dev.armPowerCut(n, Counting.WRITES_AND_SYNCS, atCut);
            c.apply(publish());
            acknowledged = true;
        } catch (HtodException e) {
            if (!dev.powerCut()) {
                throw e;
            }
        }
        boolean beforeTheCut = acknowledged && !dev.powerCut(); // later writes (the flusher's) may meet it still
        dev.crash(seed, seed % 2 == 1);
        try {
            store.close();
        } catch (HtodException expected) {
            // the device is gone: nothing of the close reaches it
        }
        try (HtodStore again = builder(disk.reopen()).clock(FIXED).open()) {
            assertTrue(!again.recoveryReport().clean(), where);
            VerifyReport v = again.verify();
            assertTrue(v.ok(), where + ": " + v);
            Map<String, Map<String, String>> found = state(again);
            if (found.equals(ref.get(1))) {
                return beforeTheCut ? null : Outcome.AFTER;
            }
            assertTrue(!acknowledged, where + ": the publish was acknowledged, but the store does not hold it");
            assertTrue(found.equals(ref.get(0)), where + ": neither the state before the publish nor the one after it;"
                    + " against the state before: " + differences(ref.get(0), found) + "; against the state after: "
                    + differences(ref.get(1), found));
            return Outcome.BEFORE;
        }
    }

    /** The keys (decoded as UTF-8) whose entries differ between two states, map by map, at most ten. */
    private static String differences(Map<String, Map<String, String>> expected, Map<String, Map<String, String>> found) {
        List<String> out = new ArrayList<>();
        for (String name : MAPS) {
            Map<String, String> e = expected.get(name);
            Map<String, String> f = found.get(name);
            Set<String> keys = new TreeSet<>(e.keySet());
            keys.addAll(f.keySet());
            for (String k : keys) {
                if (!Objects.equals(e.get(k), f.get(k)) && out.size() < 10) {
                    out.add(name + " " + new String(Base64.getDecoder().decode(k), StandardCharsets.UTF_8)
                            + (e.get(k) == null ? " (not expected)" : f.get(k) == null ? " (missing)" : " (other value)"));
                }
            }
        }
        return out.toString();
    }
}
