package dev.runner.queue;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;

import java.net.URI;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoopbackSigningTest {

    @Test
    void onlyEndpointsOnThisMachineGoUnsigned() {
        assertTrue(LoopbackSigning.appliesTo(URI.create("http://127.0.0.1:9324")));
        assertTrue(LoopbackSigning.appliesTo(URI.create("http://localhost:4566")));
        assertTrue(LoopbackSigning.appliesTo(URI.create("http://[::1]:9324")));
        assertFalse(LoopbackSigning.appliesTo(URI.create("https://sqs.us-east-1.amazonaws.com")));
        assertFalse(LoopbackSigning.appliesTo(URI.create("https://vpce-0a1b2c3d-sqs.us-east-1.vpce.amazonaws.com")));
        assertFalse(LoopbackSigning.appliesTo(URI.create("http://10.0.0.12:9324")));
        assertFalse(LoopbackSigning.appliesTo(null));
    }

    @Test
    void theAuthorizationHeaderNamesTheCallersKeyWithoutComputingASignature() {
        SdkHttpRequest signed = sign(AwsBasicCredentials.create("ItemWorkerFunction", "secret"));
        String authorization = signed.firstMatchingHeader("Authorization").orElseThrow();
        assertTrue(authorization.startsWith("AWS4-HMAC-SHA256 Credential=ItemWorkerFunction/"), authorization);
        assertTrue(authorization.contains("/us-east-1/sqs/aws4_request"), authorization);
        assertTrue(authorization.endsWith("Signature=" + "0".repeat(64)), authorization);
        assertTrue(signed.firstMatchingHeader("X-Amz-Date").isPresent());
        assertFalse(authorization.contains("secret"));
    }

    @Test
    void aSessionTokenTravelsAsSigV4SendsIt() {
        SdkHttpRequest signed = sign(AwsSessionCredentials.create("key", "secret", "token"));
        assertEquals("token", signed.firstMatchingHeader("X-Amz-Security-Token").orElseThrow());
    }

    private static SdkHttpRequest sign(AwsCredentialsIdentity identity) {
        SdkHttpRequest request = SdkHttpRequest.builder().method(SdkHttpMethod.POST).uri(URI.create("http://127.0.0.1:9324/")).build();
        return LoopbackSigning.scheme().signer().sign(b -> b.request(request).identity(identity)
                .putProperty(AwsV4HttpSigner.REGION_NAME, "us-east-1")
                .putProperty(AwsV4FamilyHttpSigner.SERVICE_SIGNING_NAME, "sqs")).request();
    }
}
