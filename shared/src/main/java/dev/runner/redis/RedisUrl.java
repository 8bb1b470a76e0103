package dev.runner.redis;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.RedisURI;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/** Redis URLs: the forms Runner reads, the seeds Lettuce gets from them, and how they are shown in messages. */
final class RedisUrl {

    private RedisUrl() {}

    /**
     * {@code redis://} and {@code rediss://} are standalone; {@code redis-cluster://h:p[,h:p]} and
     * {@code rediss-cluster://…} name cluster mode in the URL itself.
     */
    static Redis.Settings settings(String url, Duration timeout) {
        Objects.requireNonNull(url, "url");
        int schemeEnd = url.indexOf("://");
        if (schemeEnd < 0) {
            throw new IllegalArgumentException("Redis URL without scheme: " + redacted(url));
        }
        String scheme = url.substring(0, schemeEnd).toLowerCase(Locale.ROOT);
        String rest = url.substring(schemeEnd + 3);
        return switch (scheme) {
            case "redis", "rediss" -> new Redis.Settings(url, RedisMode.STANDALONE, null, timeout);
            case "redis-cluster", "rediss-cluster" -> new Redis.Settings(
                    (scheme.startsWith("rediss") ? "rediss://" : "redis://") + rest, RedisMode.CLUSTER, null, timeout);
            default -> throw new IllegalArgumentException(
                    "unknown Redis scheme " + scheme + " (redis, rediss, redis-cluster, rediss-cluster): " + redacted(url));
        };
    }

    /** One URI per seed; user info on the first applies to all, an AUTH source replaces it. */
    static List<RedisURI> seeds(Redis.Settings settings) {
        String rest = settings.url().substring(settings.url().indexOf("://") + 3);
        String userInfo = "";
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            userInfo = rest.substring(0, at + 1);
            rest = rest.substring(at + 1);
        }
        RedisCredentialsProvider credentials = settings.auth() == null ? null : credentials(settings.auth());
        List<RedisURI> seeds = new ArrayList<>();
        for (String hostPort : rest.split(",")) {
            String seed = hostPort.trim();
            int slash = seed.indexOf('/');
            String database = "";
            if (slash >= 0) {
                database = seed.substring(slash);
                seed = seed.substring(0, slash);
            }
            if (seed.isEmpty()) {
                continue;
            }
            RedisURI uri = RedisURI.create((settings.tls() ? "rediss://" : "redis://") + userInfo + seed
                    + (settings.mode() == RedisMode.STANDALONE ? database : ""));
            uri.setTimeout(settings.timeout());
            if (credentials != null) {
                uri.setCredentialsProvider(credentials);
            }
            seeds.add(uri);
        }
        if (seeds.isEmpty()) {
            throw new IllegalArgumentException("Redis URL without a host: " + redacted(settings.url()));
        }
        return List.copyOf(seeds);
    }

    /** The token is read on a worker thread: a secret read must never block Lettuce's event loop. */
    private static RedisCredentialsProvider credentials(Redis.Auth auth) {
        return () -> Mono.fromCallable(() -> RedisCredentials.just(null, auth.token()))
                .subscribeOn(Schedulers.boundedElastic());
    }

    /** The URL with its user info masked. */
    static String redacted(String url) {
        return url.replaceAll("//[^@/]*@", "//***@");
    }

    /** host:port of the seeds, never the credentials. */
    static String endpoints(List<RedisURI> seeds) {
        return seeds.stream().map(uri -> uri.getHost() + ":" + uri.getPort()).toList().toString();
    }
}
