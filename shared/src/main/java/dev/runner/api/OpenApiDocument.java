package dev.runner.api;

import dev.runner.http.ApiResponse;
import dev.runner.json.Json;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * {@code GET /openapi.json}: the OpenAPI 3.1 document of every management route and the webhook
 * route (resource {@code api/openapi.json}), public as the route list in docs/management-api.md
 * is. Tests keep it true: it validates as OpenAPI, names exactly the routes served, and the
 * answers the integration tests receive validate against its schemas.
 */
public final class OpenApiDocument {

    /** Where the document lives on the classpath. */
    public static final String RESOURCE = "api/openapi.json";

    private final ClassLoader loader;
    private volatile String compact;

    public OpenApiDocument() {
        this(OpenApiDocument.class.getClassLoader());
    }

    OpenApiDocument(ClassLoader loader) {
        this.loader = loader;
    }

    /** The document as served: read on first use (a function that never serves it never reads it), without its indentation. */
    public ApiResponse answer() {
        String body = compact;
        if (body == null) {
            body = Json.write(Json.parse(read(loader)));
            compact = body;
        }
        return new ApiResponse(200, Map.of("content-type", "application/json", "cache-control", "no-cache"), body);
    }

    /** The document's text as the repository holds it. */
    public static byte[] read(ClassLoader loader) {
        try (InputStream in = loader.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("OpenAPI document missing from the jar: " + RESOURCE);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("OpenAPI document " + RESOURCE + " unreadable", e);
        }
    }
}
