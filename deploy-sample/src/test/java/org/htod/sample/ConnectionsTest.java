package org.htod.sample;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
}
