package dev.runner.secrets;

import dev.runner.aws.AwsClients;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClient;

import java.net.URI;
import java.time.Duration;

/**
 * AWS Secrets Manager's {@code GetSecretValue}, over the SDK's client ({@link AwsClients}). A
 * refusal (AccessDenied, no such secret) is a {@link SecretUnavailableException} naming the secret
 * and the service's error code, never the value; a throttle, a 5xx or a broken connection is tried
 * again by the SDK's standard retry mode.
 */
public final class SecretsManagerSource implements SecretSource, AutoCloseable {

    private static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

    private final SecretsManagerClient client;

    /**
     * @param endpoint    null = the region's Secrets Manager; else an override (the local runtime's)
     * @param credentials resolved at each read, never at build: a SnapStart snapshot holds none
     */
    public SecretsManagerSource(URI endpoint, String region, AwsCredentialsProvider credentials) {
        this.client = AwsClients.configure(SecretsManagerClient.builder(), endpoint, region, credentials, READ_TIMEOUT).build();
    }

    @Override
    public String read(String secretId) {
        try {
            return client.getSecretValue(b -> b.secretId(secretId)).secretString();
        } catch (SdkException e) {
            // The cause only when no answer came: a refusal's exception says no more than the message.
            throw new SecretUnavailableException("secret " + secretId + " could not be read: " + AwsClients.describe(e),
                    e instanceof AwsServiceException ? null : e);
        }
    }

    @Override
    public void close() {
        client.close();
    }

    @Override
    public String toString() {
        return "SecretsManagerSource[" + client.serviceClientConfiguration().endpointOverride().map(URI::toString).orElse("regional") + "]";
    }
}
