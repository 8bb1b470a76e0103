package dev.runner.app;

import dev.runner.config.RunnerConfig;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

import java.util.function.Supplier;

/** The credentials every AWS client of a root signs its requests with. */
final class AwsCredentialChain {

    private AwsCredentialChain() {}

    /**
     * For an AWS endpoint: the function's role's ({@code roleCredentials}), else, for a server on
     * this machine (an endpoint override and no credentials given), placeholders.
     */
    static AwsCredentialsProvider forEndpoint(RunnerConfig config, String endpointOverride, Supplier<AwsCredentialsProvider> roleCredentials) {
        if (endpointOverride != null && config.awsCredentials() == null && config.credentialsEndpoint() == null) {
            return StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local"));
        }
        return roleCredentials.get();
    }

    /**
     * The function's role credentials, one source for every AWS client: the keys in the root's
     * environment ({@code AWS_ACCESS_KEY_ID}…: Lambda's, or the local runtime's for each function),
     * else the SDK's default chain, which reads the container credentials endpoint Lambda gives
     * SnapStart functions instead, at the first call and never into a snapshot ({@link RoleCredentials}).
     */
    static AwsCredentialsProvider role(RunnerConfig config) {
        RunnerConfig.AwsCredentials given = config.awsCredentials();
        if (given == null) {
            return new RoleCredentials();
        }
        return StaticCredentialsProvider.create(given.sessionToken() == null
                ? AwsBasicCredentials.create(given.accessKeyId(), given.secretAccessKey())
                : AwsSessionCredentials.create(given.accessKeyId(), given.secretAccessKey(), given.sessionToken()));
    }
}
