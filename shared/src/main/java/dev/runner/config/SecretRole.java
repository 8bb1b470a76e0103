package dev.runner.config;

/**
 * The secrets Runner reads at run time from Secrets Manager, never from its environment. Each is
 * named to the functions by one variable, {@code RUNNER_<ROLE>_SECRET} (a secret name or ARN;
 * template.yaml sets it from a parameter); functions declare the roles they read, so their
 * {@code secretsmanager:GetSecretValue} grants can be checked against the template.
 */
public enum SecretRole {
    /** JSON {@code {"username": …, "password": …}}, the shape of RDS-managed secrets (rotated every 7 days). */
    DATABASE,
    /** Plain text: the management API's admin bearer key. */
    API_KEY,
    /** Plain text: the HMAC key Runner signs its handler calls with. */
    HANDLER_SIGNING_KEY,
    /** Plain text: the HMAC key the items' callback URLs are signed with (docs/handler-contract.md, callbacks); no handler holds it. */
    CALLBACK_KEY,
    /** Plain text: the Redis AUTH token (ElastiCache in-transit encryption with AUTH). */
    REDIS_AUTH,
    /**
     * Not one secret but a name prefix, for Migrate only: each runtime function's login secret is
     * the prefix then its {@link dev.runner.store.DatabaseRole}'s name ({@code {"username", "password"}}),
     * and Migrate reads each to give that role its login.
     */
    DATABASE_LOGINS;

    /** The variable holding the secret's name or ARN. */
    public String variable() {
        return "RUNNER_" + name() + "_SECRET";
    }
}
