package org.htod.mob;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.TreeMap;
import org.htod.Codec;
import org.htod.HtodMap;
import org.htod.HtodStore;
import org.htod.LayerAccess;
import org.htod.VerifyReport;
import org.htod.core.HtodException;
import org.htod.core.device.MemoryDevice;
import org.htod.core.device.SimulatedCrashException;

/** Helpers of the write layer's tests: contents of a store, copies of devices, the layer's counters. */
final class LogStores {
    private LogStores() {}

    static int scale() {
        return Integer.getInteger("htod.test.scale", 1);
    }

    /** The write layer of a store in log mode. */
    static WriteLayer layer(HtodStore s) {
        return LayerAccess.layer(s);
    }

    /**
     * Every map of {@code s}, read through the API with string codecs: key to {@code value@version}.
     * Checks on the way that iteration gives each key once, that lookups agree with it and that
     * each map's size counts what it iterates.
     */
    static Map<String, Map<String, String>> content(HtodStore s) {
        Map<String, Map<String, String>> out = new TreeMap<>();
        for (String name : s.mapNames()) {
            HtodMap<String, String> m = s.map(name, Codec.string(), Codec.string());
            Map<String, String> c = new TreeMap<>();
            for (Map.Entry<String, String> e : m.entrySet()) {
                String prev = c.put(e.getKey(), e.getValue() + "@" + m.version(e.getKey()));
                if (prev != null) {
                    throw new AssertionError("map " + name + ": iteration gave " + e.getKey() + " twice");
                }
            }
            for (Map.Entry<String, String> e : c.entrySet()) {
                String v = m.get(e.getKey());
                if (v == null || !e.getValue().startsWith(v + "@") || e.getValue().length() <= v.length() + 1) {
                    throw new AssertionError("map " + name + ": iteration gave " + e.getKey() + " = " + e.getValue()
                            + ", get gives " + v);
                }
            }
            assertEquals(c.size(), m.size(), "map " + name + ": size() and iteration");
            out.put(name, c);
        }
        return out;
    }

    /** Fails unless the store verifies. */
    static void verify(HtodStore s) {
        VerifyReport r = s.verify();
        if (!r.ok()) {
            throw new AssertionError("the store does not verify: " + r);
        }
    }

    /** A new device holding a copy of {@code d}'s bytes. */
    static MemoryDevice copy(MemoryDevice d) {
        MemoryDevice out = new MemoryDevice();
        long size = d.size();
        ByteBuffer buf = ByteBuffer.allocate(1 << 20);
        for (long pos = 0; pos < size; pos += buf.capacity()) {
            buf.clear().limit((int) Math.min(buf.capacity(), size - pos));
            d.read(pos, buf);
            out.write(pos, buf.flip());
        }
        return out;
    }

    /** Whether {@code e} is the device's power cut, or an error of the store caused by it. */
    static boolean causedByPowerCut(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof SimulatedCrashException) {
                return true;
            }
        }
        return false;
    }

    /** Closes a store abandoned at a power cut: its device is gone, so the close may fail. */
    static void closeQuietly(HtodStore s) {
        if (s == null) {
            return;
        }
        try {
            s.close();
        } catch (HtodException expected) {
            // the device was cut or crashed under it
        }
    }

    /** Device offset of the log frame holding stream position {@code p}, in a lap of {@code lap} stream bytes (512-byte frames). */
    static long frameOffset(long p, long lap) {
        return org.htod.core.container.Superblock.LOG_OFFSET + p % lap / 488 * 512;
    }

    /** Whether device offset {@code at} lies in a log region of {@code logSize} bytes. */
    static boolean inLog(long at, long logSize) {
        return at >= org.htod.core.container.Superblock.LOG_OFFSET && at < org.htod.core.container.Superblock.LOG_OFFSET + logSize;
    }

    /** Whether {@code t} is inside {@code type}'s method {@code method} now, running or waiting. */
    static boolean inside(Thread t, Class<?> type, String method) {
        return org.htod.testkit.Threads.inside(t, type, method);
    }
}
