package dev.runner.app;

import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;

/**
 * The function's role credentials from the SDK's default chain (under SnapStart, Lambda's container
 * credentials endpoint, {@code AWS_CONTAINER_CREDENTIALS_FULL_URI}), read at the first AWS call and
 * refreshed by the SDK before they expire. {@link #forget} drops what was read, before a SnapStart
 * checkpoint: credentials read at init (the database login's secret) stay out of the snapshot, and
 * each restored environment reads its own at its first call.
 */
final class RoleCredentials implements AwsCredentialsProvider, AutoCloseable {

    private volatile DefaultCredentialsProvider chain = newChain();

    @Override
    public AwsCredentials resolveCredentials() {
        return chain.resolveCredentials();
    }

    /** Forgets the credentials read so far; the next call reads them again. */
    void forget() {
        DefaultCredentialsProvider read = chain;
        chain = newChain();
        read.close();
    }

    @Override
    public void close() {
        chain.close();
    }

    private static DefaultCredentialsProvider newChain() {
        return DefaultCredentialsProvider.builder().build();
    }

    @Override
    public String toString() {
        return "RoleCredentials[the SDK's default chain]";
    }
}
