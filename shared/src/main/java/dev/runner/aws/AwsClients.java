package dev.runner.aws;

import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.awscore.client.builder.AwsClientBuilder;
import software.amazon.awssdk.awscore.client.builder.AwsSyncClientBuilder;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.api.BackoffStrategy;

import java.net.URI;
import java.security.SecureRandom;
import java.time.Duration;

/**
 * What every AWS client of Runner's shares: the SDK's client over the JDK's URL connection (no
 * Apache or Netty client of the SDK's is loaded), the region of the environment, an endpoint
 * override for a server on this machine, and the SDK's standard retry mode (a throttle, a 5xx or a
 * broken connection tried again, three attempts in all, after a wait drawn at random up to a cap
 * that doubles: 100 ms, then 1 s after a throttle). And how a refusal reads.
 */
public final class AwsClients {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** The standard mode's caps on the first retry's wait, and on any wait. */
    static final Duration ERROR_BASE = Duration.ofMillis(100);
    static final Duration THROTTLE_BASE = Duration.ofSeconds(1);
    private static final Duration MAX_WAIT = Duration.ofSeconds(20);
    /**
     * The waits' jitter. Not the SDK's {@code ThreadLocalRandom}: its seeder sits in a SnapStart
     * snapshot, so every environment restored from one would draw the same waits, and their retries
     * against a throttled queue would arrive together. The JDK's default SecureRandom mixes fresh
     * system entropy into each draw.
     */
    private static final SecureRandom JITTER = new SecureRandom();

    private AwsClients() {
    }

    /**
     * @param endpoint    null = the region's endpoint; else an override (the local runtime's, LocalStack)
     * @param credentials resolved at each request (the SDK's providers cache and refresh their own)
     */
    public static <B extends AwsClientBuilder<B, ?> & AwsSyncClientBuilder<B, ?>> B configure(
            B builder, URI endpoint, String region, AwsCredentialsProvider credentials, Duration readTimeout) {
        builder.region(Region.of(region))
                .credentialsProvider(credentials)
                .httpClientBuilder(UrlConnectionHttpClient.builder().connectionTimeout(CONNECT_TIMEOUT).socketTimeout(readTimeout))
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.standardRetryStrategy().toBuilder()
                        .backoffStrategy(fullJitter(ERROR_BASE)).throttlingBackoffStrategy(fullJitter(THROTTLE_BASE)).build()));
        if (endpoint != null) {
            builder.endpointOverride(endpoint);
        }
        return builder;
    }

    /**
     * IAM refused the caller: its policies do not allow the action, never a passing fault. Told by
     * the error code alone: a 403 is also what a bad or expired token gets ({@code
     * InvalidClientTokenId}, {@code ExpiredToken}…), which says nothing about the function's grants.
     */
    public static boolean accessDenied(SdkException failure) {
        String code = errorCode(failure);
        return code != null && code.startsWith("AccessDenied");
    }

    /**
     * A failure in a line: the service's error code, its words and the HTTP status for a refusal
     * ({@code AccessDeniedException: … (HTTP 400)}), the client's words when no answer came. Never a
     * request's body or a key.
     */
    public static String describe(SdkException failure) {
        if (failure instanceof AwsServiceException refused && refused.awsErrorDetails() != null) {
            AwsErrorDetails details = refused.awsErrorDetails();
            return details.errorCode() + ": " + details.errorMessage() + " (HTTP " + refused.statusCode() + ")";
        }
        return failure.getMessage();
    }

    private static String errorCode(SdkException failure) {
        return failure instanceof AwsServiceException refused && refused.awsErrorDetails() != null
                ? refused.awsErrorDetails().errorCode() : null;
    }

    /** The standard mode's full jitter, from {@link #JITTER}: before try {@code attempt} (2, 3, …) a wait up to {@code base × 2^(attempt − 2)}. */
    static BackoffStrategy fullJitter(Duration base) {
        return attempt -> {
            if (attempt <= 1) {
                return Duration.ZERO;
            }
            long cap = Math.min(MAX_WAIT.toMillis(), base.toMillis() << Math.min(attempt - 2, 20));
            return Duration.ofMillis(JITTER.nextLong(cap + 1));
        };
    }
}
