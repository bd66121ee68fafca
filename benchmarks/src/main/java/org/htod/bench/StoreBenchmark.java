package org.htod.bench;

import org.openjdk.jmh.annotations.Fork;

/**
 * What every benchmark class shares: one fork with the JVM flags the rivals need on Java 17
 * (lmdbjava and Chronicle Map, with Chronicle's usage analytics off; {@link
 * org.htod.bench.store.Stores#JVM_FLAGS} lists the same flags) and a heap large enough to hold a
 * corpus's values made ahead of a pass, fixed in size and touched whole before the benchmark
 * starts ({@code -XX:+AlwaysPreTouch}): otherwise a store that keeps data on the heap (htod's
 * entry cache and write buffer) pays the JVM's first touch of each heap page inside the measured
 * passes, several seconds of page faults on a virtual machine (docs/READ-PATH.md), which stores
 * that keep their data off the heap never pay.
 */
@Fork(value = 1, jvmArgsAppend = {
    "-Xms6g", "-Xmx6g", "-XX:+AlwaysPreTouch",
    "-Dchronicle.analytics.disable=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED"
})
public abstract class StoreBenchmark {}
