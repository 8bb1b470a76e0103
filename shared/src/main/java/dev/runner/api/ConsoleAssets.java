package dev.runner.api;

import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The operator console's static files (resources under {@code console/}): the page at
 * {@code GET /console}, its script and style at {@code GET /console/{asset}}. They hold no data
 * (everything is fetched from the management API with the operator's key), so they are served
 * without a key. Only the files named here are served: a path never reaches the class loader.
 */
public final class ConsoleAssets {

    /** The first path segment of every console route. */
    static final String SEGMENT = "console";
    static final String PAGE = "index.html";

    /**
     * Same-origin script, style and fetch only: no inline script or style, no plugins, no framing,
     * no {@code <base>}; forms are handled by the script, so a form never submits the key anywhere.
     */
    static final String CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; "
            + "img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
            + "frame-ancestors 'none'";

    private static final Map<String, String> CONTENT_TYPES = Map.of(
            PAGE, "text/html; charset=utf-8",
            "console.js", "text/javascript; charset=utf-8",
            "console.css", "text/css; charset=utf-8");

    private record Asset(String body, String etag, String contentType) {}

    private final ClassLoader loader;
    private final Map<String, Asset> loaded = new ConcurrentHashMap<>();

    public ConsoleAssets() {
        this(ConsoleAssets.class.getClassLoader());
    }

    ConsoleAssets(ClassLoader loader) {
        this.loader = loader;
    }

    /** True for every path the console's routes take, which therefore need no key. */
    public static boolean serves(String path) {
        String trimmed = path == null ? "" : path.strip();
        while (trimmed.startsWith("/")) {
            trimmed = trimmed.substring(1);
        }
        return trimmed.equals(SEGMENT) || trimmed.startsWith(SEGMENT + "/");
    }

    /** {@code GET /console}: the page. {@code /console/} is redirected, so the page's relative links resolve under it. */
    public ApiResponse page(ApiRequest request) {
        String path = request.path() == null ? "" : request.path();
        if (path.endsWith("/")) {
            String canonical = path.replaceAll("/+$", "");
            return new ApiResponse(308, Map.of("location", canonical, "cache-control", "no-cache"), "");
        }
        return serve(PAGE, request);
    }

    /** {@code GET /console/{asset}}: the script or the style; anything else is 404. */
    public ApiResponse asset(ApiRequest request) {
        String name = request.pathParameter("asset");
        if (name == null || name.equals(PAGE) || !CONTENT_TYPES.containsKey(name)) {
            return ApiResponse.error(404, "not_found", "no console asset " + name);
        }
        return serve(name, request);
    }

    private ApiResponse serve(String name, ApiRequest request) {
        Asset asset = loaded.computeIfAbsent(name, this::load);
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("content-type", asset.contentType());
        // Names carry no version, so the browser revalidates every time and a deploy is seen at once;
        // the ETag makes that revalidation a bodiless 304.
        headers.put("cache-control", "no-cache");
        headers.put("etag", asset.etag());
        headers.put("content-security-policy", CONTENT_SECURITY_POLICY);
        headers.put("x-content-type-options", "nosniff");
        headers.put("referrer-policy", "no-referrer");
        if (asset.etag().equals(request.header("if-none-match"))) {
            return new ApiResponse(304, headers, "");
        }
        return new ApiResponse(200, headers, asset.body());
    }

    private Asset load(String name) {
        String resource = SEGMENT + "/" + name;
        try (InputStream in = loader.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("console asset missing from the jar: " + resource);
            }
            byte[] bytes = in.readAllBytes();
            String etag = "\"" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes), 0, 16) + "\"";
            return new Asset(new String(bytes, StandardCharsets.UTF_8), etag, CONTENT_TYPES.get(name));
        } catch (IOException e) {
            throw new UncheckedIOException("console asset " + resource + " unreadable", e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
