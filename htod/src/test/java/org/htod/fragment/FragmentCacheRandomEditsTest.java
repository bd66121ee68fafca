package org.htod.fragment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.LayerAccess;
import org.htod.core.device.MemoryDevice;
import org.htod.odg.CycleException;
import org.junit.jupiter.api.Test;

/**
 * Random publishes, unpublishes, batches, refused sources (cycles, malformed includes) and
 * expiry sweeps against a model of the sources. After every step each published page is compared,
 * byte for byte, with an assembly from scratch that this test does itself (its own parser,
 * recursion over the model's sources): so reconstruction, which rebuilds pages by replacing spans,
 * must give exactly what full assembly gives. Even seeds run in log mode (every unit one atomic
 * batch), odd seeds in direct mode (the unit's fallback). A failure names its seed; {@code
 * -Dfragment.seed=N} replays one.
 */
class FragmentCacheRandomEditsTest {
    private static final Pattern INCLUDE = Pattern.compile("<!--#include\\s+virtual=\"([^\"]*)\"\\s*-->");
    private static final String[] WORDS = {"gold", "silver", "bronze", "Zürich", "滑雪", "1:02.45", "<b>", "&amp;", "", "\n"};

    private final Map<String, String> sources = new HashMap<>();
    private final Map<String, Long> expiries = new HashMap<>();
    private long reconstructed;
    private long refusals;

    /** A clock tests move by hand. */
    private static final class TestClock extends Clock {
        long now = 1_000_000;

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(now);
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    @Test
    void reconstructionMatchesAssemblyFromScratch() {
        Long only = Long.getLong("fragment.seed");
        int ops = 400 * Integer.getInteger("htod.test.scale", 1);
        if (only != null) {
            run(only, ops);
            return;
        }
        for (int i = 0; i < 10; i++) {
            run(0xf7a90000L + i, ops);
        }
        assertTrue(reconstructed > 100, "only " + reconstructed + " pages were rebuilt by reconstruction");
        assertTrue(refusals > 10, "only " + refusals + " changes were refused");
    }

    private void run(long seed, int ops) {
        sources.clear();
        expiries.clear();
        SplittableRandom r = new SplittableRandom(seed);
        TestClock clock = new TestClock();
        MemoryDevice dev = new MemoryDevice();
        boolean direct = (seed & 1) != 0;
        HtodStore store = open(dev, direct, seed);
        FragmentCache cache = FragmentCache.open(store, "site", clock);
        int op = 0;
        try {
            for (op = 0; op < ops; op++) {
                if (r.nextInt(150) == 0) {
                    store.close();
                    dev = dev.reopen();
                    store = open(dev, direct, seed);
                    cache = FragmentCache.open(store, "site", clock);
                }
                step(cache, r, clock);
                compare(cache);
            }
            store.close();
        } catch (Throwable e) {
            throw new AssertionError("seed=" + seed + " (replay with -Dfragment.seed=" + seed + ") op=" + op + " "
                    + (direct ? "direct" : "log") + " mode: " + e, e);
        }
    }

    private static HtodStore open(MemoryDevice dev, boolean direct, long seed) {
        return LayerAccess.hashKeySeed(Htod.builder(dev), seed).grain(64).directMode(direct).logSize(direct ? 0 : 1 << 20).durability(Durability.NONE)
                .open();
    }

    private static String path(SplittableRandom r) {
        String[] kinds = {"/frag/", "/frag/", "/comp/", "/page/"};
        return kinds[r.nextInt(kinds.length)] + r.nextInt(12) + ".html";
    }

    private static String text(SplittableRandom r, boolean includes) {
        StringBuilder b = new StringBuilder();
        int n = r.nextInt(8);
        for (int i = 0; i < n; i++) {
            b.append(WORDS[r.nextInt(WORDS.length)]).append(' ');
            if (includes && r.nextInt(3) == 0) {
                b.append("<!--#include").append(r.nextBoolean() ? " " : "\n  ").append("virtual=\"").append(path(r))
                        .append('"').append(r.nextBoolean() ? "" : " ").append("-->");
            }
        }
        return b.toString();
    }

    private void step(FragmentCache cache, SplittableRandom r, TestClock clock) {
        int k = r.nextInt(100);
        if (k < 50) {
            String p = path(r);
            String src = text(r, !p.startsWith("/frag/"));
            Duration ttl = r.nextInt(8) == 0 ? Duration.ofMillis(1 + r.nextInt(5000)) : null;
            apply(cache, List.of(ttl == null ? Change.publish(p, src) : Change.publish(p, src, ttl)), clock);
        } else if (k < 62) {
            List<Change> batch = new ArrayList<>();
            int n = 2 + r.nextInt(5);
            for (int i = 0; i < n; i++) {
                String p = path(r);
                batch.add(r.nextInt(5) == 0 ? Change.unpublish(p) : Change.publish(p, text(r, true)));
            }
            apply(cache, batch, clock);
        } else if (k < 72) {
            apply(cache, List.of(Change.unpublish(path(r))), clock);
        } else if (k < 80) {
            String bad = text(r, true) + new String[] {"<!--#include virtual=\"/x.html\"", "<!--#includevirtual=\"/a\" -->",
                    "<!--#include virtual=/a -->", "<!--#include virtual=\"a.html\" -->",
                    "<!--#include virtual=\"/a/../b\" -->", "<!--#include virtual=\"/a b\" -->"}[r.nextInt(6)];
            try {
                cache.publish(path(r), bad);
                fail("a malformed include was accepted: " + bad);
            } catch (MalformedIncludeException e) {
                refusals++;
            }
        } else if (k < 88) {
            clock.now += r.nextInt(3000);
            PublishResult res = cache.sweepExpired();
            List<String> due = new ArrayList<>();
            for (Map.Entry<String, Long> e : expiries.entrySet()) {
                if (e.getValue() <= clock.now) {
                    due.add(e.getKey());
                }
            }
            assertEquals(new HashSet<>(due), new HashSet<>(res.changed()), "fragments swept at " + clock.now);
            for (String p : due) {
                sources.remove(p);
                expiries.remove(p);
            }
            reconstructed += res.reconstructed();
        } else {
            // A self-include or a two-step loop: refused, nothing written.
            String a = "/comp/" + r.nextInt(12) + ".html";
            String b = "/page/" + r.nextInt(12) + ".html";
            List<Change> loop = List.of(Change.publish(a, "a <!--#include virtual=\"" + b + "\" -->"),
                    Change.publish(b, "b <!--#include virtual=\"" + a + "\" -->"));
            apply(cache, r.nextBoolean() ? loop : List.of(Change.publish(a, "self <!--#include virtual=\"" + a + "\" -->")),
                    clock);
        }
    }

    /** Applies {@code changes} to the cache and, unless refused, to the model; a refusal must be a real cycle. */
    private void apply(FragmentCache cache, List<Change> changes, TestClock clock) {
        Map<String, String> next = new HashMap<>(sources);
        Map<String, Long> nextExp = new HashMap<>(expiries);
        for (Change c : changes) {
            if (c.isUnpublish()) {
                next.remove(c.path());
                nextExp.remove(c.path());
            } else {
                next.put(c.path(), c.source());
                if (c.ttl() != null) {
                    nextExp.put(c.path(), clock.now + c.ttl().toMillis());
                } else {
                    nextExp.remove(c.path());
                }
            }
        }
        boolean cycle = hasCycle(next);
        try {
            PublishResult res = cache.apply(changes);
            if (cycle) {
                fail("changes with an include cycle were accepted: " + changes);
            }
            reconstructed += res.reconstructed();
            sources.clear();
            sources.putAll(next);
            expiries.clear();
            expiries.putAll(nextExp);
        } catch (CycleException e) {
            if (!cycle) {
                throw new AssertionError("refused without a cycle: " + changes, e);
            }
            refusals++;
        }
    }

    private static List<String> includesOf(String src) {
        List<String> out = new ArrayList<>();
        Matcher m = INCLUDE.matcher(src);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static boolean hasCycle(Map<String, String> srcs) {
        Map<String, Integer> state = new HashMap<>();
        for (String p : srcs.keySet()) {
            if (visit(p, srcs, state)) {
                return true;
            }
        }
        return false;
    }

    private static boolean visit(String p, Map<String, String> srcs, Map<String, Integer> state) {
        Integer s = state.get(p);
        if (s != null) {
            return s == 1;
        }
        state.put(p, 1);
        for (String d : includesOf(srcs.getOrDefault(p, ""))) {
            if (visit(d, srcs, state)) {
                return true;
            }
        }
        state.put(p, 2);
        return false;
    }

    /** Assembly from scratch over the model: each directive replaced by its target's assembly, "" if unpublished. */
    private String scratch(String p) {
        String src = sources.get(p);
        if (src == null) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        Matcher m = INCLUDE.matcher(src);
        int prev = 0;
        while (m.find()) {
            b.append(src, prev, m.start()).append(scratch(m.group(1)));
            prev = m.end();
        }
        return b.append(src, prev, src.length()).toString();
    }

    private void compare(FragmentCache cache) {
        assertEquals(sources.size(), cache.fragmentCount(), "fragments in cache1");
        Set<String> composites = new HashSet<>();
        for (Map.Entry<String, String> e : sources.entrySet()) {
            String p = e.getKey();
            assertEquals(e.getValue(), cache.source(p), "source of " + p);
            assertArrayEquals(scratch(p).getBytes(StandardCharsets.UTF_8), cache.page(p).getBytes(StandardCharsets.UTF_8),
                    "assembly of " + p);
            if (!includesOf(e.getValue()).isEmpty()) {
                composites.add(p);
            }
            Long exp = expiries.get(p);
            assertEquals(exp == null ? null : Instant.ofEpochMilli(exp), cache.expiresAt(p), "expiry of " + p);
        }
        assertEquals(composites.size(), cache.assembledCount(), "composites in cache2");
        Set<String> nodes = new HashSet<>(sources.keySet());
        long edges = 0;
        for (String src : sources.values()) {
            Set<String> inc = new HashSet<>(includesOf(src));
            nodes.addAll(inc);
            edges += inc.size();
        }
        assertEquals(nodes.size(), cache.graph().nodeCount(), "graph nodes: the published and what they include");
        assertEquals(edges, cache.graph().edgeCount(), "graph edges");
        assertEquals(expiries.size(), cache.expiringCount(), "entries of the expiry table");
        for (int i = 0; i < 12; i++) {
            String p = "/page/" + i + ".html";
            if (!sources.containsKey(p)) {
                assertNull(cache.page(p), p + " is not published");
            }
        }
    }
}
