package org.htod.sample;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.fragment.FragmentCache;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server's start and close: what a failed start leaves behind, and what a close owes the publishes it finds queued. */
class ServerLifecycleTest {
    @TempDir
    Path dir;

    private static PublishingServer.Config config(Path data, int port) {
        return new PublishingServer.Config(data, "127.0.0.1", port, 64 * 1024, Duration.ofSeconds(10), null, 0);
    }

    /**
     * Publishes queued behind a slow one when the server is closed are all applied, made durable
     * and answered 200 before the connections close. The close used to close every connection and
     * stop the executors first, and only then let the writer apply the queue: the publishes were
     * written, but their clients saw the connection close without an answer.
     */
    @Test
    void publishesQueuedAtACloseAreAppliedAndAnswered() throws Exception {
        Path data = dir.resolve("close.htod");
        Gate gate = new Gate();
        PublishingServer server = PublishingServer.start(config(data, 0), gate::around);
        Http http = new Http(server.url());
        ExecutorService clients = Executors.newFixedThreadPool(6);
        AtomicReference<Throwable> closeFailed = new AtomicReference<>();
        Thread closer = new Thread(() -> {
            try {
                server.close();
            } catch (Throwable t) {
                closeFailed.set(t);
            }
        }, "test-close");
        try {
            List<Future<HttpResponse<String>>> answers = new ArrayList<>();
            answers.add(clients.submit(() -> http.put("/fragments/slow.html", "slow")));
            gate.awaitEntered();
            for (int i = 0; i < 5; i++) {
                String p = "/fragments/queued-" + i + ".html";
                String body = "queued " + i;
                answers.add(clients.submit(() -> http.put(p, body)));
            }
            Gate.awaitWaiting(server.publisher(), 5);
            closer.start();
            Thread.sleep(500); // the close is under way, held by the writer: it used to close the connections here
            gate.open();
            for (Future<HttpResponse<String>> a : answers) {
                HttpResponse<String> r = a.get(60, TimeUnit.SECONDS);
                assertEquals(200, r.statusCode(), r.body());
                assertTrue(r.body().contains("\"durable\":true"), r.body());
            }
            closer.join(TimeUnit.SECONDS.toMillis(60));
            assertFalse(closer.isAlive(), "the close returned");
            assertNull(closeFailed.get(), () -> "the close threw " + closeFailed.get());
        } finally {
            gate.open();
            clients.shutdownNow();
            if (closer.getState() == Thread.State.NEW) {
                server.close();
            }
            closer.join(TimeUnit.SECONDS.toMillis(60));
        }
        try (HtodStore store = Htod.builder(data).open()) {
            assertTrue(store.recoveryReport().clean(), "closed cleanly");
            FragmentCache cache = FragmentCache.open(store, "site");
            assertEquals("slow", cache.source("/slow.html"));
            for (int i = 0; i < 5; i++) {
                assertEquals("queued " + i, cache.source("/queued-" + i + ".html"));
            }
        }
    }

    /**
     * A start on a store that another open holds locked fails and leaves nothing open: over five
     * failed starts the process's count of open file descriptors does not grow. The Netty event
     * loops were created before the store was opened and not shut down when the open failed: each
     * failed start leaked their selectors, several descriptors each.
     */
    @Test
    @SuppressWarnings("try") // the holder is only held open, for its lock
    void aStartOnALockedStoreFailsAndLeaksNoFileDescriptors() throws Exception {
        Path fds = Path.of("/proc/self/fd");
        assumeTrue(Files.isDirectory(fds), "needs /proc/self/fd");
        Path data = dir.resolve("locked.htod");
        try (HtodStore holder = Htod.builder(data).open()) {
            PublishingServer.Config c = config(data, 0);
            assertThrows(RuntimeException.class, () -> PublishingServer.start(c)); // classes loaded, their jars opened
            long before = count(fds);
            for (int i = 0; i < 5; i++) {
                assertThrows(RuntimeException.class, () -> PublishingServer.start(c));
            }
            long after = count(fds);
            assertTrue(after - before < 3, "open file descriptors: " + before + " before five failed starts, " + after
                    + " after");
        }
    }

    private static long count(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.count();
        }
    }

    /**
     * A start that fails after the store opened (the port is taken) says why and closes the store:
     * a start on it afterwards succeeds. Netty throws the bind's BindException undeclared, and the
     * start's clean-up caught only unchecked exceptions: the store stayed open and locked for the
     * life of the process, and the event loops ran on.
     */
    @Test
    void aStartThatCannotBindSaysWhyAndClosesTheStore() throws Exception {
        Path data = dir.resolve("bind.htod");
        Exception e;
        int port;
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = taken.getLocalPort();
            e = assertThrows(Exception.class, () -> PublishingServer.start(config(data, port)));
        }
        try (PublishingServer server = PublishingServer.start(config(data, 0))) {
            assertEquals(200, new Http(server.url()).put("/fragments/after.html", "bound").statusCode());
        }
        assertTrue(String.valueOf(e.getMessage()).contains("127.0.0.1:" + port), e.toString());
    }
}
