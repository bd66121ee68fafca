package org.htod.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.htod.bench.store.Stores;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Fork;

/** The JVM flags the rivals need are listed in four places; they must agree. */
class JvmFlagsTest {

    @Test
    void forkAnnotationCarriesEveryFlag() {
        Fork fork = StoreBenchmark.class.getAnnotation(Fork.class);
        List<String> forked = new ArrayList<>(List.of(fork.jvmArgsAppend()));
        forked.removeIf(f -> f.startsWith("-Xm") || f.equals("-XX:+AlwaysPreTouch")); // the heap's, not the rivals'
        assertEquals(Stores.JVM_FLAGS, forked, "@Fork(jvmArgsAppend) of StoreBenchmark");
    }

    @Test
    void argFileCarriesEveryFlag() throws IOException {
        assertEquals(Stores.JVM_FLAGS, Files.readAllLines(Paths.get("jvm-flags.txt")), "benchmarks/jvm-flags.txt");
    }

    @Test
    void surefireRunsTestsWithEveryFlag() {
        List<String> args = ManagementFactory.getRuntimeMXBean().getInputArguments();
        for (String flag : Stores.JVM_FLAGS) {
            assertTrue(args.contains(flag), "surefire argLine (store.jvm.flags in benchmarks/pom.xml) lacks " + flag);
        }
    }
}
