package org.htod.infinispan.bench;

import java.nio.file.Path;
import org.infinispan.manager.DefaultCacheManager;

/**
 * Loads {@code entries} keys into a store through a local cache, waits until its writes have
 * reached the operating system, prints {@code LOADED}, and waits to be killed with SIGKILL by
 * {@link RestartBenchmark}: the store is left as a crash leaves it. Arguments: rival, entries, directory.
 */
public final class CrashedStoreMaker {
    private CrashedStoreMaker() {}

    public static void main(String[] args) throws InterruptedException {
        Rival rival = Rival.valueOf(args[0]);
        int entries = Integer.parseInt(args[1]);
        long t0 = System.nanoTime();
        DefaultCacheManager node = Nodes.open(rival, Path.of(args[2]), false, 10_000);
        Nodes.load(node.getCache(Nodes.CACHE), entries);
        // htod at ASYNC syncs every 200 ms; the others write to the OS before a put returns.
        Thread.sleep(1_000);
        System.out.println("LOADED " + entries + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
