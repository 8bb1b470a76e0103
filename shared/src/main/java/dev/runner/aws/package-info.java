/**
 * AWS as Runner reaches it: only through the AWS SDK for Java v2, every client configured alike
 * ({@link dev.runner.aws.AwsClients}: the JDK's URL connection, the standard retry mode, the
 * environment's region and endpoint overrides), refusals read by their error code.
 */
package dev.runner.aws;
