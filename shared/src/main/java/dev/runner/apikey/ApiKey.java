package dev.runner.apikey;

import java.time.Instant;
import java.util.UUID;

/**
 * A tenant's API key as stored: never the key itself, only who it speaks for.
 *
 * @param revokedAt null while the key works
 */
public record ApiKey(UUID keyId, String tenantId, String name, Instant createdAt, Instant revokedAt) {}
