package dev.runner.secrets;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.aws.AwsException;
import dev.runner.aws.AwsJsonClient;
import dev.runner.aws.AwsKeys;
import dev.runner.json.Json;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * AWS Secrets Manager's {@code GetSecretValue}, spoken directly ({@link AwsJsonClient}, JSON 1.1).
 * The SDK's client cost every function about 1,300 classes and 250–500 ms at cold start for this
 * one call; bench/README.md, cold start. A refusal (AccessDenied, no such secret) is a {@link
 * SecretUnavailableException} naming the secret and the service's error type, never the value; a
 * throttle, a 5xx or a broken connection is tried up to three times.
 */
public final class SecretsManagerSource implements SecretSource {

    private static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

    private final AwsJsonClient client;

    /**
     * @param endpoint null = the region's Secrets Manager; else an override (the local runtime's)
     * @param keys     asked at each read, so refreshed credentials are used as soon as they exist
     */
    public SecretsManagerSource(URI endpoint, String region, Supplier<AwsKeys> keys, Clock clock) {
        // Signed for real even on loopback: a read is rare, and the cold-start bench then pays what Lambda pays.
        this.client = new AwsJsonClient(AwsJsonClient.Service.SECRETS_MANAGER, endpoint, region, keys, clock, READ_TIMEOUT, false);
    }

    @Override
    public String read(String secretId) {
        JsonNode answer;
        try {
            answer = client.call("GetSecretValue", Json.object().put("SecretId", secretId));
        } catch (AwsException e) {
            throw new SecretUnavailableException("secret " + secretId + " could not be read: " + e.getMessage(),
                    e.unreachable() ? e : null);
        }
        JsonNode value = answer.get("SecretString");
        return value == null || value.isNull() ? null : value.asText();
    }

    @Override
    public String toString() {
        return "SecretsManagerSource[" + client.endpoint() + "]";
    }
}
