package org.htod.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** A small HTTP client for the tests, on one base URL. */
final class Http {
    private final URI base;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    Http(String base) {
        this.base = URI.create(base);
    }

    HttpResponse<String> get(String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30)).GET();
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(b.build());
    }

    HttpResponse<String> put(String path, String body) {
        return put(path, body.getBytes(StandardCharsets.UTF_8));
    }

    HttpResponse<String> put(String path, byte[] body) {
        return send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body)).build());
    }

    HttpResponse<String> delete(String path) {
        return send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30)).DELETE().build());
    }

    HttpResponse<String> method(String method, String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(b.build());
    }

    private HttpResponse<String> send(HttpRequest r) {
        try {
            return client.send(r, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(r.method() + " " + r.uri() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
