package dev.runner.aws;

import java.util.Objects;

/**
 * The AWS credentials a request is signed with: Lambda's environment ({@code AWS_ACCESS_KEY_ID},
 * {@code AWS_SECRET_ACCESS_KEY}, {@code AWS_SESSION_TOKEN}) or what a provider resolved.
 *
 * @param sessionToken null for long-term keys
 */
public record AwsKeys(String accessKeyId, String secretAccessKey, String sessionToken) {

    public AwsKeys {
        Objects.requireNonNull(accessKeyId, "accessKeyId");
        Objects.requireNonNull(secretAccessKey, "secretAccessKey");
    }

    /** The key id only: the secret key and the token never reach a log line. */
    @Override
    public String toString() {
        return "AwsKeys[accessKeyId=" + accessKeyId + ", secretAccessKey=***, sessionToken=" + (sessionToken == null ? "none" : "***") + "]";
    }
}
