/**
 * AWS's JSON protocol spoken directly: {@link dev.runner.aws.AwsJsonClient} signs (SigV4) and
 * posts one operation, retries what AWS says to retry, and names the error type of what it
 * refuses. Secrets Manager and SQS are each one such client; none of the AWS SDK is loaded in a
 * function (about 1,300 classes and 300–600 ms of cold start each, bench/README.md). Credentials
 * come from Lambda's environment or, under SnapStart, from its container credentials endpoint
 * ({@link dev.runner.aws.ContainerCredentials}).
 */
package dev.runner.aws;
