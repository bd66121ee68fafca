package org.htod.sample;

import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes results updates and reads pages of the demo site at the same time, over HTTP on the
 * loopback interface only, for a bounded time and a bounded number of requests, then prints
 * throughput and latency percentiles. Each publisher thread owns its own results fragments, so
 * that every update it makes is the latest of its fragment when answered.
 */
final class LoadGenerator {
    /**
     * @param base the server, on a loopback address
     * @param duration how long to run at most
     * @param maxPublishes stop publishing after this many (all threads)
     * @param maxReads stop reading after this many (all threads)
     */
    record Plan(URI base, Duration duration, long maxPublishes, long maxReads, int publishers, int readers) {}

    /** Figures of one run. */
    record Report(double seconds, long publishes, long reads, long notModified, long errors, long[] publishNanos,
            long[] readNanos) {
        double publishesPerSecond() {
            return publishes / seconds;
        }

        double readsPerSecond() {
            return reads / seconds;
        }

        static double percentileMillis(long[] sorted, double p) {
            if (sorted.length == 0) {
                return 0;
            }
            int i = (int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1));
            return sorted[i] / 1e6;
        }

        String text() {
            return String.format(Locale.ROOT, "load: %.1f s%n"
                    + "  publishes: %,d  (%,.0f/s)  latency ms p50 %.2f  p90 %.2f  p99 %.2f  max %.2f%n"
                    + "  page reads: %,d  (%,.0f/s, %,d answered 304)  latency ms p50 %.2f  p90 %.2f  p99 %.2f  max %.2f%n"
                    + "  errors: %d", seconds, publishes, publishesPerSecond(), percentileMillis(publishNanos, 50),
                    percentileMillis(publishNanos, 90), percentileMillis(publishNanos, 99), percentileMillis(publishNanos, 100),
                    reads, readsPerSecond(), notModified, percentileMillis(readNanos, 50), percentileMillis(readNanos, 90),
                    percentileMillis(readNanos, 99), percentileMillis(readNanos, 100), errors);
        }
    }

    private final Plan plan;
    private final DemoSite site;
    private final HttpClient client;

    LoadGenerator(Plan plan, DemoSite site) throws IOException {
        InetAddress host = InetAddress.getByName(plan.base().getHost());
        if (!host.isLoopbackAddress()) {
            throw new IllegalArgumentException("the load generator targets loopback addresses only, not " + host);
        }
        this.plan = plan;
        this.site = site;
        this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    Report run() throws InterruptedException {
        long deadline = System.nanoTime() + plan.duration().toNanos();
        AtomicLong publishes = new AtomicLong();
        AtomicLong reads = new AtomicLong();
        AtomicLong notModified = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        List<String> results = site.resultPaths();
        List<String> pages = site.pagePaths();
        List<long[]> pubLat = new ArrayList<>();
        List<long[]> readLat = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int w = 0; w < plan.publishers(); w++) {
            int id = w;
            List<String> mine = new ArrayList<>();
            for (int i = id; i < results.size(); i += plan.publishers()) {
                mine.add(results.get(i));
            }
            long[][] lat = {new long[1024]};
            int[] n = {0};
            threads.add(new Thread(() -> {
                SplittableRandom r = new SplittableRandom(id);
                long version = System.currentTimeMillis();
                while (System.nanoTime() < deadline && publishes.getAndIncrement() < plan.maxPublishes()) {
                    String p = mine.get(r.nextInt(mine.size()));
                    String body = site.resultsFragment(p, ++version, r);
                    long s = System.nanoTime();
                    int status = send(HttpRequest.newBuilder(plan.base().resolve("/fragments" + p))
                            .PUT(HttpRequest.BodyPublishers.ofString(body)).build(), errors);
                    if (status == 200) {
                        lat[0] = add(lat[0], n[0]++, System.nanoTime() - s);
                    } else {
                        publishes.decrementAndGet();
                    }
                }
                publishes.updateAndGet(v -> Math.min(v, plan.maxPublishes()));
                synchronized (pubLat) {
                    pubLat.add(Arrays.copyOf(lat[0], n[0]));
                }
            }, "load-publisher-" + id));
        }
        for (int w = 0; w < plan.readers(); w++) {
            int id = w;
            long[][] lat = {new long[1024]};
            int[] n = {0};
            threads.add(new Thread(() -> {
                SplittableRandom r = new SplittableRandom(1000 + id);
                while (System.nanoTime() < deadline && reads.getAndIncrement() < plan.maxReads()) {
                    String p = pages.get(r.nextInt(pages.size()));
                    long s = System.nanoTime();
                    int status = send(HttpRequest.newBuilder(plan.base().resolve("/pages" + p)).GET().build(), errors);
                    if (status == 200 || status == 304) {
                        lat[0] = add(lat[0], n[0]++, System.nanoTime() - s);
                        if (status == 304) {
                            notModified.incrementAndGet();
                        }
                    } else {
                        reads.decrementAndGet();
                    }
                }
                reads.updateAndGet(v -> Math.min(v, plan.maxReads()));
                synchronized (readLat) {
                    readLat.add(Arrays.copyOf(lat[0], n[0]));
                }
            }, "load-reader-" + id));
        }
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        long[] p = merge(pubLat);
        long[] rd = merge(readLat);
        return new Report(secs, p.length, rd.length, notModified.get(), errors.get(), p, rd);
    }

    private int send(HttpRequest req, AtomicLong errors) {
        try {
            int status = client.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
            if (status != 200 && status != 304) {
                errors.incrementAndGet();
            }
            return status;
        } catch (IOException e) {
            errors.incrementAndGet();
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static long[] add(long[] a, int i, long v) {
        long[] out = i < a.length ? a : Arrays.copyOf(a, a.length * 2);
        out[i] = v;
        return out;
    }

    private static long[] merge(List<long[]> parts) {
        long[] all = parts.stream().flatMapToLong(Arrays::stream).toArray();
        Arrays.sort(all);
        return all;
    }
}
