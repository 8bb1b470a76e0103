package dev.runner.secrets;

/** Where secrets live: reads a secret's current text by name or ARN. */
@FunctionalInterface
public interface SecretSource {

    /**
     * The secret's current value (its {@code AWSCURRENT} version).
     *
     * @throws SecretUnavailableException the secret could not be read (missing, not allowed, service unreachable)
     */
    String read(String secretId);
}
