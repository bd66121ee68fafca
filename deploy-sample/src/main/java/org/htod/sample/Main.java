package org.htod.sample;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.Locale;
import org.htod.RecoveryReport;

/**
 * {@code java -jar htod-sample.jar [options]}: starts the publishing server, or runs the load
 * generator. Run with {@code --help} for the options.
 */
public final class Main {
    private static final String HELP = String.join("\n",
            "usage: java -jar htod-sample.jar [options]",
            "  --data FILE         the store (default ./data/site.htod; created if missing)",
            "  --port N            port to listen on (default 8080; 0 for any free port)",
            "  --host ADDR         address to bind (default 127.0.0.1)",
            "  --demo              load the sports-results demo site into an empty store",
            "  --demo-size S       full (default: about 4,300 fragments, 380 pages) or small",
            "  --filler N          also publish N archive fragments into an empty store",
            "  --max-body BYTES    largest publish body (default 1048576)",
            "  --max-connections N connections open at most (default 1024); more are answered 503",
            "  --request-time S    seconds a request may take to arrive whole (default 30); then 408",
            "  --port-file FILE    write the bound port there once ready",
            "  --admin-token-file FILE  the secret of the admin endpoints (POST /admin/compact), read",
            "                      from FILE; a request carries it as Authorization: Bearer TOKEN.",
            "                      Without it the admin endpoints answer 403",
            "  --load              run the load generator: against --target, or against a server it",
            "                      starts on a free port over a fresh demo store, then exit",
            "  --target URL        a running server with the demo site (loopback only)",
            "  --seconds N         load: how long (default 20)",
            "  --max-publishes N   load: publishes at most (default 1000000)",
            "  --max-reads N       load: page reads at most (default 10000000)",
            "  --publishers N      load: publishing threads (default 4)",
            "  --readers N         load: reading threads (default 4)");

    private Main() {}

    public static void main(String[] args) throws Exception {
        Deque<String> a = new ArrayDeque<>(Arrays.asList(args));
        Path data = Path.of("data", "site.htod");
        int port = 8080;
        String host = "127.0.0.1";
        boolean demo = false;
        boolean load = false;
        DemoSite site = DemoSite.full();
        int filler = 0;
        int maxBody = 1 << 20;
        Path portFile = null;
        String adminToken = null;
        int maxConnections = PublishingServer.Config.MAX_CONNECTIONS;
        Duration requestTime = PublishingServer.Config.REQUEST_TIME;
        URI target = null;
        long seconds = 20;
        long maxPublishes = 1_000_000;
        long maxReads = 10_000_000;
        int publishers = 4;
        int readers = 4;
        while (!a.isEmpty()) {
            String o = a.poll();
            switch (o) {
                case "--data" -> data = Path.of(value(a, o));
                case "--port" -> port = Integer.parseInt(value(a, o));
                case "--host" -> host = value(a, o);
                case "--demo" -> demo = true;
                case "--demo-size" -> site = switch (value(a, o)) {
                    case "full" -> DemoSite.full();
                    case "small" -> DemoSite.small();
                    default -> throw usage("--demo-size is full or small");
                };
                case "--filler" -> filler = Integer.parseInt(value(a, o));
                case "--max-body" -> maxBody = Integer.parseInt(value(a, o));
                case "--port-file" -> portFile = Path.of(value(a, o));
                case "--max-connections" -> maxConnections = Integer.parseInt(value(a, o));
                case "--request-time" -> requestTime = Duration.ofSeconds(Long.parseLong(value(a, o)));
                case "--admin-token-file" -> {
                    adminToken = Files.readString(Path.of(value(a, o)), StandardCharsets.UTF_8).strip();
                    if (adminToken.isEmpty()) {
                        throw usage("--admin-token-file: the file is empty");
                    }
                }
                case "--load" -> load = true;
                case "--target" -> target = URI.create(value(a, o));
                case "--seconds" -> seconds = Long.parseLong(value(a, o));
                case "--max-publishes" -> maxPublishes = Long.parseLong(value(a, o));
                case "--max-reads" -> maxReads = Long.parseLong(value(a, o));
                case "--publishers" -> publishers = Integer.parseInt(value(a, o));
                case "--readers" -> readers = Integer.parseInt(value(a, o));
                case "--help", "-h" -> {
                    System.out.println(HELP);
                    return;
                }
                default -> throw usage("unknown option " + o);
            }
        }
        if (load) {
            LoadGenerator.Plan plan0 = new LoadGenerator.Plan(target, Duration.ofSeconds(seconds), maxPublishes, maxReads,
                    publishers, readers);
            runLoad(plan0, site);
            return;
        }
        PublishingServer.Config cfg = new PublishingServer.Config(data, host, port, maxBody, Duration.ofSeconds(10),
                demo ? site : null, filler).withLimits(maxConnections, requestTime).withAdminToken(adminToken);
        PublishingServer server = PublishingServer.start(cfg);
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "htod-sample-shutdown"));
        if (server.loadReport != null) {
            System.out.println(server.loadReport);
        }
        // Counts from the graph's counts record (one read), not the maps' sizes, which after a crash
        // read the table for every key back in the write buffer: the port is served sooner.
        RecoveryReport r = server.store().recoveryReport();
        System.out.printf(Locale.ROOT, "store %s: %s; %,d nodes and %,d edges in the dependency graph; ready in %.0f ms%n",
                data, r.clean() ? "opened cleanly" : "recovered after an unclean shutdown", server.cache().graph().nodeCount(),
                server.cache().graph().edgeCount(), server.readyIn().toNanos() / 1e6);
        System.out.println("htod publishing server at " + server.url() + "  (Ctrl-C stops it cleanly)");
        if (portFile != null) {
            Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
            Files.writeString(tmp, Integer.toString(server.port()), StandardCharsets.UTF_8);
            Files.move(tmp, portFile, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
        Thread.currentThread().join(); // serve until the process is stopped
    }

    /** Against a given server, or one started here on a fresh demo store in a temporary directory. */
    private static void runLoad(LoadGenerator.Plan plan0, DemoSite site) throws Exception {
        if (plan0.base() != null) {
            System.out.println(new LoadGenerator(plan0, site).run().text());
            return;
        }
        Path dir = Files.createTempDirectory("htod-load");
        Path store = dir.resolve("site.htod");
        try (PublishingServer server = PublishingServer.start(new PublishingServer.Config(store, "127.0.0.1", 0, 1 << 20,
                Duration.ofSeconds(10), site, 0))) {
            System.out.println(server.loadReport + "; server at " + server.url());
            LoadGenerator.Plan plan = new LoadGenerator.Plan(URI.create(server.url()), plan0.duration(), plan0.maxPublishes(),
                    plan0.maxReads(), plan0.publishers(), plan0.readers());
            System.out.println(new LoadGenerator(plan, site).run().text());
            PublishingServer.Stats s = server.stats();
            System.out.printf(Locale.ROOT, "server: %,d publishes in %,d units (%.1f per sync), %,d pages rebuilt, %,d of them"
                    + " by reconstruction%n", s.counts().publishes(), s.counts().units(), s.counts().publishes()
                    / (double) Math.max(1, s.counts().units()), s.counts().rebuilds(), s.counts().reconstructions());
        } finally {
            Files.deleteIfExists(store);
            Files.deleteIfExists(dir);
        }
    }

    private static String value(Deque<String> a, String option) {
        String v = a.poll();
        if (v == null) {
            throw usage(option + " needs a value");
        }
        return v;
    }

    private static IllegalArgumentException usage(String why) {
        System.err.println(why + "\n" + HELP);
        return new IllegalArgumentException(why);
    }
}
