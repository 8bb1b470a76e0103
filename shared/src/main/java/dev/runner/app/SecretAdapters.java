package dev.runner.app;

import dev.runner.callback.CallbackUrls;
import dev.runner.config.RunnerConfig;
import dev.runner.config.SecretRole;
import dev.runner.redis.Redis;
import dev.runner.secrets.DatabaseLogin;
import dev.runner.secrets.Secret;
import dev.runner.store.Credentials;

import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What the parts need of the secrets, in the form each takes: a value given in the configuration
 * (tests, development) is used as is; else the secret named for its role is read, through the
 * root's grants, when first needed.
 */
final class SecretAdapters {

    private final RunnerConfig config;
    private final Function<SecretRole, Secret> granted;

    /** @param granted a secret by role, refused unless the function is granted it */
    SecretAdapters(RunnerConfig config, Function<SecretRole, Secret> granted) {
        this.config = config;
        this.granted = granted;
    }

    /** The management API's admin key: given by value, else read from its secret; null = none (every call 401). */
    String apiKey() {
        if (config.apiKey() != null || config.secret(SecretRole.API_KEY) == null) {
            return config.apiKey();
        }
        return granted.apply(SecretRole.API_KEY).value();
    }

    /**
     * The deployment-wide handler signing key: given by value, else read from its secret; null when neither is set.
     * It signs only the calls of handlers that never had a key of their own (docs/handler-contract.md): without it,
     * such a handler's calls fail until an admin creates its key.
     */
    String handlerSigningKey() {
        if (config.handlerSigningSecret() != null) {
            return config.handlerSigningSecret();
        }
        if (config.secret(SecretRole.HANDLER_SIGNING_KEY) == null) {
            return null;
        }
        return granted.apply(SecretRole.HANDLER_SIGNING_KEY).value();
    }

    /**
     * The key the items' callback URLs are signed with, as it is now: given by value, else its secret's value, read again
     * when older than {@link CallbackUrls#KEY_MAX_AGE} (a rotation tells no function of itself); null when neither is set.
     */
    Supplier<String> callbackKey() {
        if (config.callbacks().secret() != null) {
            String given = config.callbacks().secret();
            return () -> given;
        }
        if (config.secret(SecretRole.CALLBACK_KEY) == null) {
            return () -> null;
        }
        Secret secret = granted.apply(SecretRole.CALLBACK_KEY);
        return () -> secret.value(CallbackUrls.KEY_MAX_AGE);
    }

    /** The database login: from its secret, re-read when Postgres refuses it (a rotation); else the values given. */
    Credentials database() {
        if (config.secret(SecretRole.DATABASE) == null) {
            return Credentials.fixed(config.database().user(), config.database().password());
        }
        Secret secret = granted.apply(SecretRole.DATABASE);
        return new Credentials() {
            @Override
            public Login current() {
                return login(secret.value());
            }

            @Override
            public Login refreshed() {
                return login(secret.refresh());
            }

            private Login login(String json) {
                DatabaseLogin login = DatabaseLogin.parse(secret.id(), json);
                return new Login(login.username(), login.password());
            }
        };
    }

    /** The Redis AUTH token, re-read (at most once a second) at each connect, so a rotated token reaches the next connection. */
    Redis.Auth redisAuth() {
        if (config.secret(SecretRole.REDIS_AUTH) == null) {
            return null;
        }
        Secret secret = granted.apply(SecretRole.REDIS_AUTH);
        return secret::refresh;
    }
}
