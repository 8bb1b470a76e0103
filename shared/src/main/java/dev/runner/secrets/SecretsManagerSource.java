package dev.runner.secrets;

import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClient;

import java.net.URI;
import java.time.Duration;

/**
 * AWS Secrets Manager through the SDK's lean URL-connection client (the one the SQS client uses,
 * so the function jar gains only the service model). One {@code GetSecretValue} per read.
 */
public final class SecretsManagerSource implements SecretSource, AutoCloseable {

    private final SecretsManagerClient client;

    public SecretsManagerSource(SecretsManagerClient client) {
        this.client = client;
    }

    /** @param endpoint null = the region's Secrets Manager; else an override (the local runtime) */
    public static SecretsManagerSource create(URI endpoint, Region region, AwsCredentialsProvider credentials) {
        var builder = SecretsManagerClient.builder()
                .httpClient(UrlConnectionHttpClient.builder().connectionTimeout(Duration.ofSeconds(5))
                        .socketTimeout(Duration.ofSeconds(10)).build())
                .region(region)
                .credentialsProvider(credentials);
        if (endpoint != null) {
            builder.endpointOverride(endpoint);
        }
        return new SecretsManagerSource(builder.build());
    }

    @Override
    public String read(String secretId) {
        try {
            return client.getSecretValue(b -> b.secretId(secretId)).secretString();
        } catch (SdkException e) {
            throw new SecretUnavailableException("secret " + secretId + " could not be read: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
