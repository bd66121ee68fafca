package org.htod.sample;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the server does with a connection: the order of its answers, and the limits on what it may hold. */
class ConnectionsTest {
    @TempDir
    Path dir;

    private PublishingServer.Config config(String name, Duration idle) {
        return new PublishingServer.Config(dir.resolve(name), "127.0.0.1", 0, 64 * 1024, Duration.ofSeconds(10), null, 0,
                idle);
    }

    private static Socket connect(PublishingServer server) throws IOException {
        URI u = URI.create(server.url());
        Socket s = new Socket(u.getHost(), u.getPort());
        s.setSoTimeout(10_000);
        return s;
    }

    private static void write(Socket s, String request) throws IOException {
        s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
        s.getOutputStream().flush();
    }

    /** Reads until the server closes the connection, or until the socket's timeout ("TIMEOUT" appended). */
    private static String readAll(Socket s) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] b = new byte[8192];
        InputStream in = s.getInputStream();
        try {
            for (int n; (n = in.read(b)) >= 0;) {
                got.write(b, 0, n);
            }
        } catch (SocketTimeoutException e) {
            return got.toString(StandardCharsets.ISO_8859_1) + "TIMEOUT";
        }
        return got.toString(StandardCharsets.ISO_8859_1);
    }

    /**
     * A PUT and a GET pipelined on one connection are answered in that order, though the PUT's
     * answer waits for its durability (held at the gate here, for longer than the idle time): the
     * GET was answered first.
     */
    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        Gate gate = new Gate();
        try (PublishingServer server = PublishingServer.start(config("order.htod", Duration.ofMillis(500)), gate::around);
                Socket s = connect(server)) {
            try {
                write(s, "PUT /fragments/first.html HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nfirst"
                        + "GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                gate.awaitEntered();
                Thread.sleep(1_000); // time to answer the GET, were it not held; twice the idle time
            } finally {
                gate.open();
            }
            String r = readAll(s);
            assertTrue(r.startsWith("HTTP/1.1 200"), r);
            int put = r.indexOf("\"durable\":true");
            int get = r.indexOf("\"counts\"");
            assertTrue(put >= 0 && (get < 0 || put < get), "the PUT's answer first: " + r);
            assertTrue(get >= 0, "both answered: " + r);
            assertEquals(2, r.split("HTTP/1.1 200 OK", -1).length - 1, r);
        }
    }

    /** Writes {@code request} and reads one answer to it (its headers and Content-Length bytes of content). */
    private static String exchange(Socket s, String request) throws IOException {
        write(s, request);
        InputStream in = s.getInputStream();
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        while (!got.toString(StandardCharsets.ISO_8859_1).contains("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                return got.toString(StandardCharsets.ISO_8859_1) + "CLOSED";
            }
            got.write(c);
        }
        String head = got.toString(StandardCharsets.ISO_8859_1);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length: (\\d+)").matcher(head);
        assertTrue(m.find(), head);
        return head + new String(in.readNBytes(Integer.parseInt(m.group(1))), StandardCharsets.ISO_8859_1);
    }

    /**
     * Past the configured number of open connections (2 here) one more is answered {@code 503}
     * with {@code Retry-After} and {@code Connection: close} at once, before it sends anything,
     * and closed; one that sends its request gets the same answer, not a reset. It is counted,
     * holds no slot: the others go on being served, and once one of them closes a new one is.
     * It was closed without an answer, which a client or a load balancer reads as a failed server.
     */
    @Test
    void aConnectionPastTheLimitIsAnswered503AndClosed() throws Exception {
        try (PublishingServer server = PublishingServer.start(config("limit.htod", Duration.ofSeconds(10))
                .withLimits(2, Duration.ofSeconds(10)))) {
            String get = "GET /stats HTTP/1.1\r\nHost: x\r\n\r\n";
            try (Socket a = connect(server); Socket b = connect(server)) {
                assertTrue(exchange(a, get).startsWith("HTTP/1.1 200"));
                assertTrue(exchange(b, get).startsWith("HTTP/1.1 200"));
                for (String request : new String[] {"", get}) {
                    try (Socket c = connect(server)) {
                        c.setSoTimeout(5_000);
                        long t0 = System.nanoTime();
                        write(c, request);
                        String r;
                        try {
                            r = readAll(c);
                        } catch (IOException e) { // reset
                            r = "RESET " + e;
                        }
                        assertTrue(r.startsWith("HTTP/1.1 503 Service Unavailable\r\n"),
                                "the connection past the limit is answered 503: " + r);
                        assertTrue(r.toLowerCase(java.util.Locale.ROOT).contains("\r\nretry-after: 1\r\n")
                                && r.toLowerCase(java.util.Locale.ROOT).contains("\r\nconnection: close\r\n"), r);
                        assertFalse(r.endsWith("TIMEOUT"), "and closed: " + r);
                        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(3), "at once: " + r);
                    }
                }
                assertTrue(exchange(a, get).startsWith("HTTP/1.1 200"));
                assertTrue(exchange(b, get).startsWith("HTTP/1.1 200"));
                String metrics = exchange(a, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
                assertTrue(metrics.contains("\nhtod_connections_refused_total 2.0\n"), metrics);
                assertTrue(metrics.contains("\nhtod_connections 2.0\n"), metrics);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (true) { // the two closed: a new connection is served once the server has seen them close
                try (Socket d = connect(server)) {
                    if (exchange(d, get).startsWith("HTTP/1.1 200")) {
                        break;
                    }
                } catch (IOException e) {
                    // closed: not seen yet
                }
                assertTrue(System.nanoTime() < deadline, "a connection is served again after the others closed");
                Thread.sleep(20);
            }
        }
    }

    /**
     * A request must arrive whole within the request time (300 ms here) from its first byte, or it
     * is answered 408 and its connection closed: a client sending a byte every 100 ms, well within
     * the idle time, kept its connection for as long as it liked. Its headers or its body; and
     * after a request whose answer is still owed, the 408 comes after that answer.
     */
    @Test
    void aRequestThatDoesNotArriveWholeInTimeIsAnswered408() throws Exception {
        Gate gate = new Gate();
        try (PublishingServer server = PublishingServer.start(config("trickle.htod", Duration.ofSeconds(10))
                .withLimits(16, Duration.ofMillis(300)), gate::around)) {
            assertTimedOut(server, "", "GET /stats HTTP/1.1\r\nHost: x\r\nUser-Agent: one byte at a time\r\n\r\n");
            assertTimedOut(server, "PUT /fragments/t.html HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n",
                    "x".repeat(40));
            try (Socket s = connect(server)) {
                write(s, "PUT /fragments/first.html HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nfirst");
                gate.awaitEntered();
                long t0 = System.nanoTime();
                for (char c : "GET /stats HTTP/1.1\r\n".toCharArray()) { // 1 s: past the request time
                    write(s, String.valueOf(c));
                    Thread.sleep(50);
                }
                gate.open();
                String r = readAll(s);
                assertTrue(r.startsWith("HTTP/1.1 200") && r.contains("\"durable\":true"), r);
                assertTrue(r.indexOf("HTTP/1.1 408") > r.indexOf("durable"), "the 408 after the PUT's answer: " + r);
                assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), r);
            } finally {
                gate.open();
            }
        }
    }

    /**
     * A request whose first bytes arrive with the end of the one before it has the request time
     * from then, not from its next byte: its clock did not start until more came, and a client
     * that sent nothing more held the connection for the idle time (10 s here) instead. Also when
     * it comes behind a publish whose answer is still owed (the clock runs once the server reads
     * again).
     */
    @Test
    void aPipelinedRequestsDeadlineStartsWithItsFirstByte() throws Exception {
        Gate gate = new Gate();
        try (PublishingServer server = PublishingServer.start(config("first-byte.htod", Duration.ofSeconds(10))
                .withLimits(16, Duration.ofMillis(300)), gate::around)) {
            try (Socket s = connect(server)) {
                s.setSoTimeout(3_000);
                long t0 = System.nanoTime();
                write(s, "GET /stats HTTP/1.1\r\nHost: x\r\n\r\nGET /sta");
                String r = readAll(s);
                assertTrue(r.startsWith("HTTP/1.1 200") && r.contains("HTTP/1.1 408") && !r.endsWith("TIMEOUT"),
                        "200, then 408 and closed: " + r);
                assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(3), r);
            }
            try (Socket s = connect(server)) {
                s.setSoTimeout(3_000);
                write(s, "PUT /fragments/first.html HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nfirst"
                        + "GET /stats HTTP/1.1\r\nHost: x\r\n");
                gate.awaitEntered();
                Thread.sleep(500); // past the request time: the server is not reading, the clock stands
                long t0 = System.nanoTime();
                gate.open();
                String r = readAll(s);
                assertTrue(r.startsWith("HTTP/1.1 200") && r.contains("\"durable\":true"), r);
                assertTrue(r.indexOf("HTTP/1.1 408") > r.indexOf("durable") && !r.endsWith("TIMEOUT"),
                        "the 408 after the PUT's answer, and closed: " + r);
                assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(3), r);
            } finally {
                gate.open();
            }
        }
    }

    /**
     * An answer to a HEAD has no content, also behind a publish that was sent {@code 100
     * Continue}: the interim answer takes no request's place, and the answers after it are framed
     * right (the GET after the HEAD is read as an answer of its own).
     */
    @Test
    void anAnswerToAHeadHasNoContentAlsoAfterAnInterimAnswer() throws Exception {
        try (PublishingServer server = PublishingServer.start(config("head.htod", Duration.ofSeconds(10)));
                Socket s = connect(server)) {
            write(s, "PUT /fragments/h.html HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
            byte[] interim = s.getInputStream().readNBytes("HTTP/1.1 100 Continue\r\n\r\n".length());
            assertEquals("HTTP/1.1 100 Continue\r\n\r\n", new String(interim, StandardCharsets.ISO_8859_1));
            write(s, "hello" + "HEAD /fragments/h.html HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /fragments/h.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            String r = readAll(s);
            String[] answers = r.split("(?=HTTP/1\\.1 )");
            assertEquals(3, answers.length, r);
            assertTrue(answers[0].startsWith("HTTP/1.1 200") && answers[0].contains("\"durable\":true"), r);
            assertTrue(answers[1].startsWith("HTTP/1.1 200") && answers[1].endsWith("\r\n\r\n")
                    && answers[1].toLowerCase(java.util.Locale.ROOT).contains("content-length: 5\r\n"), "no content: " + r);
            assertTrue(answers[2].startsWith("HTTP/1.1 200") && answers[2].endsWith("\r\n\r\nhello"), r);
        }
    }

    /**
     * What a connection received, split into answers as a client reads them: one for each of
     * {@code methods} (fewer if the connection closed after an answer), each a status line and
     * headers, then Content-Length bytes of content, none for a HEAD or a 304. Fails where an
     * answer does not begin where the one before ended, or where bytes are left after the last:
     * a HEAD answered with content leaves them where the next answer should begin.
     */
    private static List<String> answers(String raw, String... methods) {
        List<String> out = new ArrayList<>();
        int at = 0;
        for (String method : methods) {
            if (at == raw.length()) {
                break; // closed
            }
            assertTrue(raw.startsWith("HTTP/1.1 ", at), "the answer to the " + method + " begins at byte " + at
                    + " with a status line: " + raw);
            int end = raw.indexOf("\r\n\r\n", at);
            assertTrue(end >= 0, "the answer's head ends: " + raw);
            String head = raw.substring(at, end + 4);
            Matcher m = Pattern.compile("(?i)\r\ncontent-length: (\\d+)\r\n").matcher(head);
            int length = 0;
            if (!method.equals("HEAD") && !head.startsWith("HTTP/1.1 304")) {
                assertTrue(m.find(), "a Content-Length: " + head);
                length = Integer.parseInt(m.group(1));
            }
            assertTrue(end + 4 + length <= raw.length(), "the content whole: " + raw);
            out.add(raw.substring(at, end + 4 + length));
            at = end + 4 + length;
        }
        assertEquals(raw.length(), at, "nothing after the last answer: " + raw);
        return out;
    }

    private static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    /**
     * The 503 of a connection past the limit goes before its request is read, so it answers a
     * HEAD as well as a GET: it carries no content, and says so. It carried a line, which a client
     * that sent a HEAD and then a GET read where the next answer should begin.
     */
    @Test
    void theAnswerToAConnectionPastTheLimitHasNoContent() throws Exception {
        try (PublishingServer server = PublishingServer.start(config("limit-head.htod", Duration.ofSeconds(10))
                .withLimits(1, Duration.ofSeconds(10))); Socket a = connect(server)) {
            String get = "GET /stats HTTP/1.1\r\nHost: x\r\n\r\n";
            assertTrue(exchange(a, get).startsWith("HTTP/1.1 200")); // the one slot taken
            try (Socket c = connect(server)) {
                write(c, "HEAD /stats HTTP/1.1\r\nHost: x\r\n\r\n" + get);
                String r = readAll(c);
                List<String> got = answers(r, "HEAD", "GET");
                assertEquals(1, got.size(), r);
                assertTrue(got.get(0).startsWith("HTTP/1.1 503 ") && lower(r).contains("\r\ncontent-length: 0\r\n")
                        && lower(r).contains("\r\nretry-after: 1\r\n"), r);
            }
        }
    }

    /**
     * An answer to a request whose method the server never read carries no content, and says so:
     * a 408 for a request line that arrived without the rest of its head, a 400 for a request
     * line the decoder cannot read, pipelined before a GET. The request could be a HEAD (both
     * are here); the 400 was answered as the GET that Netty puts in its place, with a line after it.
     */
    @Test
    void anAnswerToARequestWhoseMethodWasNotReadHasNoContent() throws Exception {
        try (PublishingServer server = PublishingServer.start(config("unread.htod", Duration.ofSeconds(10))
                .withLimits(16, Duration.ofMillis(300)))) {
            try (Socket s = connect(server)) {
                write(s, "HEAD /stats HTTP/1.1\r\nHost: x\r\n");
                String r = readAll(s);
                List<String> got = answers(r, "HEAD");
                assertTrue(got.get(0).startsWith("HTTP/1.1 408 ") && lower(r).contains("\r\ncontent-length: 0\r\n"), r);
            }
            try (Socket s = connect(server)) {
                write(s, "HEAD /stats FOO\r\nHost: x\r\n\r\nGET /stats HTTP/1.1\r\nHost: x\r\n\r\n");
                String r = readAll(s);
                List<String> got = answers(r, "HEAD", "GET");
                assertEquals(1, got.size(), "closed after the 400: " + r);
                assertTrue(got.get(0).startsWith("HTTP/1.1 400 ") && lower(r).contains("\r\ncontent-length: 0\r\n"), r);
            }
        }
    }

    /**
     * Every refusal of a HEAD the server reads, by the endpoints (404, 400, 405, 401) or by the
     * body's limit (413), has the refusal's status and headers, Content-Length the one a GET would
     * get, and no content: pipelined with a GET after them, every answer is read where it begins.
     */
    @Test
    void refusalsOfAHeadHaveNoContent() throws Exception {
        try (PublishingServer server = PublishingServer.start(config("refusals-head.htod", Duration.ofSeconds(10))
                .withAdminToken("secret")); Socket s = connect(server)) {
            write(s, "HEAD /pages/none.html HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "HEAD /pages/a//b.html HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "HEAD /admin/compact HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\n\r\n"
                    + "HEAD /admin/compact HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "HEAD /stats HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n" + "x".repeat(70_000)
                    + "GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            String r = readAll(s);
            List<String> got = answers(r, "HEAD", "HEAD", "HEAD", "HEAD", "HEAD", "GET");
            assertEquals(6, got.size(), r);
            String[] statuses = {"404", "400", "405", "401", "413", "200"};
            for (int i = 0; i < statuses.length; i++) {
                assertTrue(got.get(i).startsWith("HTTP/1.1 " + statuses[i] + " "), i + ": " + r);
                if (i < 5) {
                    assertFalse(lower(got.get(i)).contains("\r\ncontent-length: 0\r\n"), "the GET's length: " + got.get(i));
                }
            }
        }
    }

    /** Writes {@code start} at once and then {@code rest} a byte every 100 ms: answered 408 and closed, in under 3 s. */
    private static void assertTimedOut(PublishingServer server, String start, String rest) throws Exception {
        try (Socket s = connect(server)) {
            s.setSoTimeout(3_000);
            write(s, start);
            Thread trickle = new Thread(() -> {
                try {
                    for (char c : rest.toCharArray()) {
                        Thread.sleep(100);
                        write(s, String.valueOf(c));
                    }
                } catch (IOException | InterruptedException e) {
                    // closed by the server: the point
                }
            }, "test-trickle");
            trickle.setDaemon(true);
            long t0 = System.nanoTime();
            trickle.start();
            String r = readAll(s);
            trickle.interrupt();
            assertTrue(r.startsWith("HTTP/1.1 408") && !r.endsWith("TIMEOUT"), "408 and closed: " + r);
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(3), r);
        }
    }
}
