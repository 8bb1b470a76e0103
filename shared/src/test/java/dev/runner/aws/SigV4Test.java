package dev.runner.aws;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.identity.spi.AwsSessionCredentialsIdentity;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/** The hand-written signer against the SDK's: same request, same instant, same Authorization header. */
class SigV4Test {

    private static final Instant AT = Instant.parse("2026-11-30T21:15:42Z");
    private static final byte[] BODY = "{\"SecretId\":\"runner/database\"}".getBytes(StandardCharsets.UTF_8);

    @Test
    void signsAGetSecretValueWithASessionTokenAsTheSdkDoes() {
        AwsKeys keys = new AwsKeys("ASIAEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "FQoGZXIvYXdzEXAMPLE//token+/=");
        String host = "secretsmanager.eu-west-1.amazonaws.com";

        assertEquals(sdkAuthorization(URI.create("https://" + host + "/"), "eu-west-1",
                        AwsSessionCredentialsIdentity.create(keys.accessKeyId(), keys.secretAccessKey(), keys.sessionToken())),
                ours(host, "eu-west-1", keys));
    }

    @Test
    void signsWithLongTermKeysAndAPortInTheHostAsTheSdkDoes() {
        AwsKeys keys = new AwsKeys("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", null);

        assertEquals(sdkAuthorization(URI.create("http://127.0.0.1:4566/"), "us-east-1",
                        AwsCredentialsIdentity.create(keys.accessKeyId(), keys.secretAccessKey())),
                ours("127.0.0.1:4566", "us-east-1", keys));
    }

    @Test
    void anyChangeToTheBodyOrTheTargetChangesTheSignature() {
        AwsKeys keys = new AwsKeys("AKIDEXAMPLE", "secret", null);
        Map<String, String> headers = headers("h", "secretsmanager.GetSecretValue", keys);
        String signed = SigV4.authorization("POST", "/", headers, BODY, "secretsmanager", "us-east-1", keys);

        assertNotEquals(signed, SigV4.authorization("POST", "/", headers, "{}".getBytes(StandardCharsets.UTF_8),
                "secretsmanager", "us-east-1", keys));
        assertNotEquals(signed, SigV4.authorization("POST", "/", headers("h", "secretsmanager.PutSecretValue", keys), BODY,
                "secretsmanager", "us-east-1", keys));
    }

    @Test
    void theKeysPrintWithoutTheSecretKeyOrToken() {
        String printed = new AwsKeys("AKIDEXAMPLE", "the-secret-key", "the-token").toString();

        assertEquals("AwsKeys[accessKeyId=AKIDEXAMPLE, secretAccessKey=***, sessionToken=***]", printed);
    }

    private static String ours(String host, String region, AwsKeys keys) {
        return SigV4.authorization("POST", "/", headers(host, "secretsmanager.GetSecretValue", keys), BODY, "secretsmanager", region, keys);
    }

    /** The headers SecretsManagerSource sends. */
    private static Map<String, String> headers(String host, String target, AwsKeys keys) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", "application/x-amz-json-1.1");
        headers.put("Host", host);
        headers.put("X-Amz-Content-Sha256", SigV4.contentSha256(BODY));
        headers.put("X-Amz-Date", SigV4.amzDate(AT));
        headers.put("X-Amz-Target", target);
        if (keys.sessionToken() != null) {
            headers.put("X-Amz-Security-Token", keys.sessionToken());
        }
        return headers;
    }

    private static String sdkAuthorization(URI uri, String region, AwsCredentialsIdentity identity) {
        SdkHttpRequest request = SdkHttpRequest.builder().method(SdkHttpMethod.POST).uri(uri)
                .putHeader("Content-Type", "application/x-amz-json-1.1")
                .putHeader("X-Amz-Target", "secretsmanager.GetSecretValue")
                .build();
        var signed = AwsV4HttpSigner.create().sign(r -> r.identity(identity).request(request)
                .payload(ContentStreamProvider.fromByteArray(BODY))
                .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "secretsmanager")
                .putProperty(AwsV4HttpSigner.REGION_NAME, region)
                .putProperty(HttpSigner.SIGNING_CLOCK, Clock.fixed(AT, ZoneOffset.UTC)));
        return signed.request().firstMatchingHeader("Authorization").orElseThrow();
    }
}
