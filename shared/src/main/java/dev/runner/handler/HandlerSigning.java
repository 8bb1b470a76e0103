package dev.runner.handler;

import com.github.benmanes.caffeine.cache.Cache;
import dev.runner.cache.Caches;
import dev.runner.integration.HandlerRef;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The secrets Runner signs a handler's calls with (docs/handler-contract.md): the handler's own signing keys, the
 * current one first, and while a rotation overlaps the one it replaces. A handler that never had a key of its own
 * is signed with the deployment-wide key, when there is one: the migration path of a deployment whose handlers all
 * verified that key. Once a handler has a key, the deployment-wide key signs its calls only during its first
 * key's overlap, and never again.
 *
 * <p>What a handler's keys are is read from Postgres at most once per TTL per handler; when each stops signing is
 * decided against the clock at every call, so an overlap ends on time, and a key created or retired through the
 * API signs, or stops, within the TTL.
 */
public final class HandlerSigning implements SigningSecrets {

    /** Handlers whose keys are held in process; only handlers of stored types are ever asked for. */
    private static final int MAX_CACHED = 10_000;

    private final SigningKeyStore store;
    private final String globalSecret;
    private final Clock clock;
    private final Cache<HandlerRef, List<SigningKeyStore.Stored>> cache;

    /**
     * @param globalSecret the deployment-wide key ({@code RUNNER_HANDLER_SIGNING_KEY_SECRET}); null when there is none,
     *                     and then a handler without a key of its own is not called
     * @param ttl          how long a handler's keys as read are trusted
     */
    public HandlerSigning(SigningKeyStore store, String globalSecret, Duration ttl, Clock clock) {
        this.store = store;
        this.globalSecret = globalSecret == null || globalSecret.isBlank() ? null : globalSecret;
        this.clock = clock;
        this.cache = Caches.expiringAfterWrite(ttl, MAX_CACHED, clock);
    }

    /** The secrets for {@code handler}'s calls now. */
    @Override
    public List<String> of(HandlerRef handler) {
        return secrets(cache.get(handler, store::stored), globalSecret, clock.instant());
    }

    /**
     * The decision, on a handler's keys as stored (retired ones included): none ever → the global key alone, if
     * any; else the keys that sign at {@code now}, current first, the global key standing in for its row.
     */
    static List<String> secrets(List<SigningKeyStore.Stored> keys, String globalSecret, Instant now) {
        if (keys.isEmpty()) {
            return globalSecret == null ? List.of() : List.of(globalSecret);
        }
        List<String> secrets = new ArrayList<>(SigningKeyStore.MAX_SIGNING);
        keys.stream()
                .filter(stored -> stored.key().signs(now))
                .sorted(Comparator.comparing((SigningKeyStore.Stored stored) -> stored.key().state(now))
                        .thenComparing(stored -> stored.key().createdAt(), Comparator.reverseOrder()))
                .forEach(stored -> {
                    String secret = stored.key().global() ? globalSecret : stored.secret();
                    if (secret != null) {
                        secrets.add(secret);
                    }
                });
        return List.copyOf(secrets);
    }
}
