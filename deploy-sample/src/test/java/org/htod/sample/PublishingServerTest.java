package org.htod.sample;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server on an ephemeral port over the small demo site: every endpoint, and every refusal. */
class PublishingServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOKEN = "test-admin-token-7f3a";
    @TempDir
    static Path dir;
    private static PublishingServer server;
    private static Http http;

    @BeforeAll
    static void start() {
        server = PublishingServer.start(new PublishingServer.Config(dir.resolve("site.htod"), "127.0.0.1", 0, 64 * 1024,
                Duration.ofSeconds(10), DemoSite.small(), 0, Duration.ofSeconds(2)).withAdminToken(TOKEN));
        http = new Http(server.url());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void pagesAreServedWithAnETagAndA304WhenUnchanged() {
        HttpResponse<String> r = http.get("/pages/index.html");
        assertEquals(200, r.statusCode());
        assertTrue(r.body().contains("<h1>Games 2000</h1>"), r.body());
        assertFalse(r.body().contains("<!--#include"), "assembled: no directive left");
        String etag = r.headers().firstValue("etag").orElseThrow();
        assertEquals("public, max-age=10", r.headers().firstValue("cache-control").orElseThrow());
        HttpResponse<String> again = http.get("/pages/index.html", "If-None-Match", etag);
        assertEquals(304, again.statusCode());
        assertEquals("", again.body());
        assertEquals(200, http.get("/pages/index.html", "If-None-Match", "\"other\"").statusCode());
    }

    @Test
    void aPublishIsDurableWhenAnsweredAndShowsInEveryPageThatIncludesIt() throws Exception {
        String results = DemoSite.results(1, 2);
        String before = http.get("/pages" + DemoSite.eventPage(1, 2)).headers().firstValue("etag").orElseThrow();
        HttpResponse<String> r = http.put("/fragments" + results, "<p>NEW RESULTS 42</p>");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode j = JSON.readTree(r.body());
        assertTrue(j.get("durable").asBoolean());
        assertTrue(j.get("rebuilt").asInt() >= 3, r.body()); // event page, summary, sport page, ...
        JsonNode g = JSON.readTree(http.get("/graph" + results).body());
        assertTrue(g.get("affectedCount").asInt() > 3, g.toString());
        for (JsonNode a : g.get("affected")) {
            assertTrue(http.get("/pages" + a.asText()).body().contains("<p>NEW RESULTS 42</p>"), a.asText());
        }
        assertEquals(200, http.get("/pages" + DemoSite.eventPage(1, 2), "If-None-Match", before).statusCode(),
                "a changed page no longer matches its old ETag");
        assertEquals("<p>NEW RESULTS 42</p>", http.get("/fragments" + results).body());
    }

    @Test
    void aPublishWhosePagesExceedOneBatchIsRefusedWith413AndWritesNothing() {
        // 150 pages include a 60 KB fragment: republishing it rebuilds 9 MB of pages, more than one
        // log record (8 MiB with the default 64 MiB log region) holds.
        String old = "<p>" + "a".repeat(60_000) + "</p>";
        assertEquals(200, http.put("/fragments/big/shared.html", old).statusCode());
        for (int i = 0; i < 150; i++) {
            assertEquals(200, http.put("/fragments/big/page-" + i + ".html", "<h1>" + i
                    + "</h1><!--#include virtual=\"/big/shared.html\" -->").statusCode());
        }
        check(http.put("/fragments/big/shared.html", "<p>" + "b".repeat(60_000) + "</p>"), 413,
                "larger than one atomic unit of the store holds");
        assertEquals(old, http.get("/fragments/big/shared.html").body());
        assertEquals("<h1>7</h1>" + old, http.get("/pages/big/page-7.html").body());
    }

    @Test
    void deleteUnpublishesAndPagesLoseTheInclude() {
        assertEquals(200, http.put("/fragments/extra/note.html", "NOTE-7").statusCode());
        assertEquals(200, http.put("/fragments/extra/page.html", "[<!--#include virtual=\"/extra/note.html\" -->]")
                .statusCode());
        assertEquals("[NOTE-7]", http.get("/pages/extra/page.html").body());
        assertEquals(200, http.delete("/fragments/extra/note.html").statusCode());
        assertEquals("[]", http.get("/pages/extra/page.html").body());
        assertEquals(404, http.get("/pages/extra/note.html").statusCode());
        assertEquals(404, http.delete("/fragments/extra/note.html").statusCode());
    }

    @Test
    void badRequestsGetAOneLineAnswerAndChangeNothing() {
        String footer = http.get("/fragments/chrome/footer.html").body();
        String index = http.get("/pages/index.html").body();
        check(http.get("/pages/no/such.html"), 404, "no page /no/such.html");
        check(http.put("/fragments/chrome/footer.html", "<!--#include virtual=\"/index.html\" -->"), 409,
                "include cycle: /index.html includes /chrome/footer.html includes /index.html");
        check(http.put("/fragments/chrome/footer.html", "<!--#include virtual=\"/x.html\""), 400, "malformed include");
        check(http.put("/fragments/chrome/footer.html", "x".repeat(70 * 1024)), 413, "larger than 65536 bytes");
        check(http.put("/fragments/a//b.html", "x"), 400, "empty, '.' or '..' segment");
        check(http.put("/fragments/a.html?ttl=soon", "x"), 400, "ttl is a number of seconds");
        check(http.put("/fragments/a.html", new byte[] {(byte) 0xff, (byte) 0xfe}), 400, "not UTF-8");
        check(http.method("POST", "/fragments/a.html"), 405, "POST is not allowed");
        check(http.get("/nowhere"), 404, "no such endpoint");
        check(http.get("/graph/not/a/node.html"), 404, "no node");
        assertEquals(footer, http.get("/fragments/chrome/footer.html").body());
        assertEquals(index, http.get("/pages/index.html").body());
        assertEquals(404, http.get("/fragments/a.html").statusCode());
    }

    private static void check(HttpResponse<String> r, int status, String says) {
        assertEquals(status, r.statusCode(), r.body());
        assertTrue(r.body().contains(says), r.body() + " should say " + says);
        assertEquals(1, r.body().strip().lines().count(), "one line: " + r.body());
        assertFalse(r.body().contains("Exception") || r.body().contains("\tat "), r.body());
    }

    @Test
    void theStoreCompactsOnlineAndKeepsServing() throws Exception {
        String before = http.get("/pages/index.html").body();
        long fragments = server.cache().fragmentCount();
        HttpResponse<String> r = http.method("POST", "/admin/compact", "Authorization", "Bearer " + TOKEN);
        assertEquals(200, r.statusCode(), r.body());
        JsonNode c = JSON.readTree(r.body());
        assertTrue(c.get("bytesBefore").asLong() > 0 && c.get("bytesAfter").asLong() > 0, r.body());
        assertTrue(c.get("entries").asLong() >= fragments, r.body());
        assertEquals(fragments, server.cache().fragmentCount(), "every fragment is there after the swap");
        assertEquals(before, http.get("/pages/index.html").body(), "the site reads the same after the swap");
        check(http.put("/fragments/compacted/probe.html", "after compaction"), 200, "\"durable\":true");
        assertEquals("after compaction", http.get("/fragments/compacted/probe.html").body());
        assertEquals(405, http.get("/admin/compact", "Authorization", "Bearer " + TOKEN).statusCode());
        assertTrue(server.store().verify().ok(), "the compacted store verifies");
    }

    @Test
    void statsAndMetricsParse() throws Exception {
        http.get("/pages/index.html");
        JsonNode s = JSON.readTree(http.get("/stats").body());
        assertEquals(server.cache().fragmentCount(), s.get("figures").get("fragments").asLong());
        assertTrue(s.get("figures").get("graphEdges").asLong() > 100);
        assertTrue(s.get("figures").get("recovery").get("clean").isBoolean());
        assertTrue(s.get("counts").get("pageReads").asLong() >= 1);
        assertNotNull(s.get("publishLatencyMs").get("p99"));
        String metrics = http.get("/metrics").body();
        Pattern line = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*(\\{[^}]*\\})? -?[0-9.eE+-]+|NaN");
        long samples = 0;
        for (String l : metrics.split("\n")) {
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            assertTrue(line.matcher(l).matches(), "not a Prometheus sample: " + l);
            samples++;
        }
        assertTrue(samples > 10, metrics);
        assertTrue(metrics.contains("htod_page_reads_total "), metrics);
        assertTrue(metrics.contains("htod_publish_latency_seconds{quantile=\"0.99\"}"), metrics);
        assertTrue(metrics.contains("\nhtod_fragments " + server.cache().fragmentCount() + ".0\n"), metrics);
        String status = http.get("/").body();
        assertTrue(status.contains("htod publishing server") && status.contains("<svg id=\"chart\""), status);
    }

    /** Writes {@code request} on a new connection and reads until the server closes it, or "TIMEOUT" after 5 s. */
    private static String raw(String request) throws Exception {
        java.net.URI u = java.net.URI.create(server.url());
        try (java.net.Socket socket = new java.net.Socket(u.getHost(), u.getPort())) {
            socket.setSoTimeout(5_000);
            socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
            byte[] b = new byte[8192];
            try {
                for (int n; (n = socket.getInputStream().read(b)) >= 0;) {
                    got.write(b, 0, n);
                }
            } catch (java.net.SocketTimeoutException e) {
                return got.toString(java.nio.charset.StandardCharsets.ISO_8859_1) + "TIMEOUT";
            }
            return got.toString(java.nio.charset.StandardCharsets.ISO_8859_1);
        }
    }

    /** A query string that cannot be decoded (a bad escape) is a 400; it was a 500, logged as the server's error. */
    @Test
    void aMalformedQueryStringIsABadRequest() throws Exception {
        String r = raw("PUT /fragments/q.html?ttl=%zz HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
        assertTrue(r.startsWith("HTTP/1.1 400"), r);
    }

    /**
     * A request whose headers the decoder refuses is answered 400 and the connection closed: the
     * decoder discards every byte after it on the connection, and the answer said keep-alive, so a
     * client's next request on it waited for ever.
     */
    @Test
    void aRequestTheDecoderRefusesClosesItsConnection() throws Exception {
        String r = raw("GET /pages/index.html HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(10_000)
                + "\r\n\r\nGET /stats HTTP/1.1\r\nHost: x\r\n\r\n");
        assertTrue(r.startsWith("HTTP/1.1 400"), r);
        assertFalse(r.endsWith("TIMEOUT"), "the connection is closed, not left hanging: " + r);
    }

    /**
     * A connection that begins a request and goes quiet is closed once it has sent nothing for the
     * idle time (2 s here): it was held for ever, with its buffers.
     */
    @Test
    void aConnectionThatGoesQuietIsClosed() throws Exception {
        String r = raw("GET /pages/index.html HTTP/1.1\r\nHo");
        assertFalse(r.endsWith("TIMEOUT"), "closed after 2 s of nothing, before the test's 5 s: " + r);
    }

    /** A request line in absolute form is served by its path (RFC 9112 §3.2.2): it was a 404. */
    @Test
    void aRequestTargetInAbsoluteFormIsServedByItsPath() throws Exception {
        java.net.URI u = java.net.URI.create(server.url());
        String r = raw("GET http://" + u.getHost() + ":" + u.getPort() + "/pages/index.html HTTP/1.1\r\nHost: x\r\n"
                + "Connection: close\r\n\r\n");
        assertTrue(r.startsWith("HTTP/1.1 200"), r);
        assertTrue(r.contains("<h1>Games 2000</h1>"), r);
        r = raw("GET HTTP://example.org/stats?x=1 HTTP/1.1\r\nHost: example.org\r\nConnection: close\r\n\r\n");
        assertTrue(r.startsWith("HTTP/1.1 200") && r.contains("\"counts\""), r);
        assertEquals("/", HttpApi.originForm("http://h:1"));
        assertEquals("/?a=b", HttpApi.originForm("https://h?a=b"));
        assertEquals("/x", HttpApi.originForm("/x"));
    }

    /** A 304 carries no Content-Length: it said 0, which claims the page it stands for is empty. */
    @Test
    void a304CarriesNoContentLength() throws Exception {
        String etag = http.get("/pages/index.html").headers().firstValue("etag").orElseThrow();
        String r = raw("GET /pages/index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: " + etag
                + "\r\nConnection: close\r\n\r\n");
        assertTrue(r.startsWith("HTTP/1.1 304"), r);
        assertFalse(r.toLowerCase(java.util.Locale.ROOT).contains("content-length"), r);
        assertTrue(r.endsWith("\r\n\r\n"), "no content: " + r);
    }

    /**
     * HEAD is served wherever GET is, with the GET's status and headers and no content: it was a
     * 405. Every 405 says in Allow which methods its path accepts: it had no Allow.
     */
    @Test
    void headIsServedAsGetWithoutContentAndA405SaysWhatIsAllowed() throws Exception {
        HttpResponse<String> get = http.get("/pages/index.html");
        int length = get.body().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        String r = raw("HEAD /pages/index.html HTTP/1.1\r\nHost: x\r\n\r\n"
                + "HEAD /pages/no/such.html HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /fragments/chrome/footer.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        String[] answers = r.split("(?=HTTP/1\\.1 )");
        assertEquals(3, answers.length, r);
        assertTrue(answers[0].startsWith("HTTP/1.1 200"), r);
        assertTrue(answers[0].contains("content-length: " + length + "\r\n"), r);
        assertTrue(answers[0].contains("etag: " + get.headers().firstValue("etag").orElseThrow() + "\r\n"), r);
        assertTrue(answers[0].endsWith("\r\n\r\n"), "no content: " + r);
        assertTrue(answers[1].startsWith("HTTP/1.1 404") && answers[1].endsWith("\r\n\r\n"), r);
        assertTrue(answers[2].startsWith("HTTP/1.1 200") && answers[2].endsWith(http.get("/fragments/chrome/footer.html")
                .body()), r);
        for (String path : new String[] {"/", "/stats", "/metrics", "/graph/chrome/footer.html",
                "/fragments/chrome/footer.html"}) {
            assertEquals(200, http.method("HEAD", path).statusCode(), path);
        }
        HttpResponse<String> no = http.method("PUT", "/pages/index.html");
        assertEquals(405, no.statusCode(), no.body());
        assertEquals("GET, HEAD", no.headers().firstValue("allow").orElse(null));
        no = http.method("POST", "/fragments/a.html");
        assertEquals(405, no.statusCode(), no.body());
        assertEquals("GET, HEAD, PUT, DELETE", no.headers().firstValue("allow").orElse(null));
        assertEquals("GET, HEAD", http.method("DELETE", "/stats").headers().firstValue("allow").orElse(null));
    }

    /**
     * An admin request without the server's admin token is refused, 401, and compacts nothing: any
     * client that reached the server could compact its store. A server started without a token
     * answers 403 to every admin request.
     */
    @Test
    void adminRequestsNeedTheAdminToken() throws Exception {
        HttpResponse<String> r = http.method("POST", "/admin/compact");
        check(r, 401, "Authorization: Bearer");
        assertEquals("Bearer realm=\"htod admin\"", r.headers().firstValue("www-authenticate").orElse(null));
        check(http.method("POST", "/admin/compact", "Authorization", "Bearer " + TOKEN + "x"), 401, "admin token");
        check(http.method("POST", "/admin/compact", "Authorization", "Basic " + TOKEN), 401, "admin token");
        check(http.method("GET", "/admin/compact", "Authorization", "bearer x"), 401, "admin token");
        try (PublishingServer open = PublishingServer.start(new PublishingServer.Config(dir.resolve("no-token.htod"),
                "127.0.0.1", 0, 1024, Duration.ofSeconds(10), null, 0))) {
            check(new Http(open.url()).method("POST", "/admin/compact", "Authorization", "Bearer " + TOKEN), 403,
                    "admin endpoints are off");
        }
    }

    /**
     * A page's max-age does not reach past the expiry of a fragment it includes, directly or
     * through a composite: it was the server's default (10 s here), and caches served the page
     * with the fragment in it after the fragment had expired.
     */
    @Test
    void aPagesMaxAgeEndsWhenAFragmentItIncludesExpires() {
        assertEquals(200, http.put("/fragments/ttl/leaf.html?ttl=8", "LEAF").statusCode());
        assertEquals(200, http.put("/fragments/ttl/mid.html", "(<!--#include virtual=\"/ttl/leaf.html\" -->)")
                .statusCode());
        assertEquals(200, http.put("/fragments/ttl/page.html", "[<!--#include virtual=\"/ttl/mid.html\" -->]")
                .statusCode());
        HttpResponse<String> r = http.get("/pages/ttl/page.html");
        assertEquals("[(LEAF)]", r.body());
        String cc = r.headers().firstValue("cache-control").orElseThrow();
        long maxAge = Long.parseLong(cc.substring(cc.indexOf("max-age=") + 8));
        assertTrue(maxAge <= 8, cc);
        assertEquals("public, max-age=10", http.get("/pages/index.html").headers().firstValue("cache-control")
                .orElseThrow(), "a page that includes nothing expiring keeps the default");
    }

    /**
     * While a fragment has a time to live, a page's max-age is found without reading everything
     * the page includes on each read: the earliest expiry is kept per page until the page or
     * something it includes changes. Every read of the home page read the expiry and the edges
     * of each fragment under it: 37 store reads here where the page itself takes one, and it grows
     * with the site (some 4,300 fragments under the full demo's home page).
     */
    @Test
    void aPagesMaxAgeIsNotFoundByWalkingItsIncludesOnEveryRead() {
        assertEquals(200, http.put("/fragments/ttl/elsewhere.html?ttl=600", "soon gone").statusCode());
        assertEquals("public, max-age=10", maxAge("/pages/index.html"));
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) { // the least of three: a sweep or a sample may read meanwhile
            long before = server.store().stats().operations().gets();
            assertEquals("public, max-age=10", maxAge("/pages/index.html"));
            least = Math.min(least, server.store().stats().operations().gets() - before);
        }
        assertTrue(least <= 5, "store reads for one read of /pages/index.html: " + least);
    }

    /**
     * The max-age kept for a page follows every change under it: a fragment it includes
     * republished with a nearer expiry, a composite it includes changed to include one, that one
     * unpublished, the expiry dropped; and a fragment that expires gives max-age 0 until the sweep
     * takes it out of the page, then the default again.
     */
    @Test
    void aPagesMaxAgeFollowsEveryChangeUnderIt() throws Exception {
        assertEquals(200, http.put("/fragments/kept/leaf.html?ttl=600", "LEAF").statusCode());
        assertEquals(200, http.put("/fragments/kept/mid.html", "(<!--#include virtual=\"/kept/leaf.html\" -->)")
                .statusCode());
        assertEquals(200, http.put("/fragments/kept/page.html", "[<!--#include virtual=\"/kept/mid.html\" -->]")
                .statusCode());
        assertEquals("public, max-age=10", maxAge("/pages/kept/page.html"));
        assertEquals("public, max-age=10", maxAge("/pages/kept/page.html"));
        assertEquals(200, http.put("/fragments/kept/leaf.html?ttl=7", "LEAF").statusCode());
        assertMaxAgeAtMost(7, "/pages/kept/page.html");
        assertEquals(200, http.put("/fragments/kept/other.html?ttl=4", "OTHER").statusCode());
        assertMaxAgeAtMost(7, "/pages/kept/page.html"); // not included yet
        assertEquals(200, http.put("/fragments/kept/mid.html", "(<!--#include virtual=\"/kept/leaf.html\" -->"
                + "<!--#include virtual=\"/kept/other.html\" -->)").statusCode());
        assertMaxAgeAtMost(4, "/pages/kept/page.html");
        assertEquals(200, http.delete("/fragments/kept/other.html").statusCode());
        long a = assertMaxAgeAtMost(7, "/pages/kept/page.html");
        assertTrue(a > 4, "the unpublished fragment's expiry no longer counts: " + a);
        assertEquals(200, http.put("/fragments/kept/leaf.html", "LEAF").statusCode());
        assertEquals("public, max-age=10", maxAge("/pages/kept/page.html"));

        assertEquals(200, http.put("/fragments/kept/brief.html?ttl=1", "BRIEF").statusCode());
        assertEquals(200, http.put("/fragments/kept/leaf.html", "<!--#include virtual=\"/kept/brief.html\" -->")
                .statusCode());
        assertMaxAgeAtMost(1, "/pages/kept/page.html");
        Thread.sleep(1_100);
        HttpResponse<String> r = http.get("/pages/kept/page.html");
        if (r.body().contains("BRIEF")) { // expired, not swept yet (the server's own sweep runs every 5 s)
            assertEquals("public, max-age=0", r.headers().firstValue("cache-control").orElseThrow());
        }
        server.sweep();
        assertEquals("[()]", http.get("/pages/kept/page.html").body());
        assertEquals("public, max-age=10", maxAge("/pages/kept/page.html"), "swept");
    }

    private static String maxAge(String page) {
        HttpResponse<String> r = http.get(page);
        assertEquals(200, r.statusCode(), r.body());
        return r.headers().firstValue("cache-control").orElseThrow();
    }

    private static long assertMaxAgeAtMost(long most, String page) {
        String cc = maxAge(page);
        long a = Long.parseLong(cc.substring(cc.indexOf("max-age=") + 8));
        assertTrue(a <= most, page + ": " + cc + ", expected at most " + most);
        return a;
    }
}
