package dev.runner.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Every Lua script Runner runs, with the number of keys it takes. The file is
 * {@code redis/<name>-<keyCount>.lua}; its header is the contract (ScriptTest checks it). Code
 * shared by several scripts lives in {@code redis/includes/} and is inlined where a script says
 * {@code --- @include "includes/<name>"} ({@link ScriptSource}): {@link #body} and {@link #sha}
 * are of the expanded text, which is what Redis runs.
 */
public enum Script {
    /** Pause flag, breaker, adaptive scopes and handler concurrency (fair shares)/rate for one (integration, handler) group. */
    ADMIT_HANDLER("admitHandler", 10),
    /** A tenant's sliding window: admit now or reserve the next slot, paced and by priority, up to a horizon. */
    ADMIT_TENANT("admitTenant", 4),
    /** Breaker outcome (integration and tenant scopes) of a group's handler calls. */
    RECORD_OUTCOME("recordOutcome", 3),
    /** AIMD: a handler's adaptive scopes from its partner's answers (429 and Retry-After, timeouts, successes). */
    ADAPT_LIMITS("adaptLimits", 2),
    /** Gives back leases, probes and urgent markers of an admission (and the rate entries of items not called). */
    RELEASE_HANDLER("releaseHandler", 6),
    /** Gives back tenant slots of items the tenant admitted but the handler script did not. */
    REFUND_TENANT("refundTenant", 1),
    /** Gives back the future tenant slots of a cancelled run's items. */
    RELEASE_RUN_SLOTS("releaseRunSlots", 4),
    /** An integration's breaker as of now, without writing anything. */
    READ_BREAKER("readBreaker", 2),
    /** Counts admission deferrals into a period's hash: a minute's by reason (the operator's charts), a tenant's by handler and reason ("why is it waiting?"). */
    COUNT_DEFERRALS("countDeferrals", 1),
    /** Keeps a concurrency lease for an item waiting for its callback, until the wait's end at most. */
    HOLD_LEASE("holdLease", 1);

    private final String name;
    private final int keyCount;
    private final String body;
    private final String sha;

    Script(String name, int keyCount) {
        this.name = name;
        this.keyCount = keyCount;
        this.body = ScriptSource.expand(resource(name, keyCount));
        this.sha = sha1(body);
    }

    public int keyCount() {
        return keyCount;
    }

    /** Classpath resource of the script. */
    public String resource() {
        return resource(name, keyCount);
    }

    /** The text Redis runs: the resource with its includes inlined. */
    public String body() {
        return body;
    }

    /** SHA-1 of the expanded body, as EVALSHA wants it. */
    public String sha() {
        return sha;
    }

    private static String resource(String name, int keyCount) {
        return "redis/" + name + "-" + keyCount + ".lua";
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 missing from the JDK", e);
        }
    }
}
