package dev.runner.queue;

import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.scheme.AwsV4AuthScheme;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.scheme.AuthScheme;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignRequest;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignedRequest;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignRequest;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.identity.spi.AwsSessionCredentialsIdentity;
import software.amazon.awssdk.identity.spi.IdentityProvider;
import software.amazon.awssdk.identity.spi.IdentityProviders;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.CompletableFuture;

/**
 * SigV4 as an SQS server on this machine needs it (the local runtime's ElasticMQ, LocalStack):
 * the {@code Authorization} header names the access key, so a server that tells callers apart by
 * their key (the local runtime's IAM mirror) still can, but nothing is hashed or HMAC'd. Such
 * servers do not check signatures, and SigV4's hashing of every request was a measurable share of
 * the local runtime's CPU. Only for endpoints on the loopback interface: any other endpoint, an
 * AWS VPC endpoint included, is signed for real.
 */
final class LoopbackSigning {

    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'");
    /** Where a signature goes; no server on loopback reads it. */
    private static final String UNCHECKED_SIGNATURE = "0".repeat(64);

    private LoopbackSigning() {}

    /** Whether {@code endpoint} names this machine (a literal loopback address or localhost). */
    static boolean appliesTo(URI endpoint) {
        String host = endpoint == null ? null : endpoint.getHost();
        if (host == null) {
            return false;
        }
        if (host.equalsIgnoreCase("localhost")) {
            return true;
        }
        if (!host.matches("[0-9.]+|\\[?[0-9a-fA-F:]+\\]?")) {
            return false; // a name: resolving it here would be a lookup per client, and a name can move
        }
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** SigV4's scheme, with a signer that only writes the headers naming the caller. */
    static AuthScheme<AwsCredentialsIdentity> scheme() {
        return new AuthScheme<>() {
            @Override
            public String schemeId() {
                return AwsV4AuthScheme.SCHEME_ID;
            }

            @Override
            public IdentityProvider<AwsCredentialsIdentity> identityProvider(IdentityProviders providers) {
                return providers.identityProvider(AwsCredentialsIdentity.class);
            }

            @Override
            public HttpSigner<AwsCredentialsIdentity> signer() {
                return SIGNER;
            }
        };
    }

    private static final HttpSigner<AwsCredentialsIdentity> SIGNER = new HttpSigner<>() {
        @Override
        public SignedRequest sign(SignRequest<? extends AwsCredentialsIdentity> request) {
            SdkHttpRequest headers = headers(request.request(), request.identity(), request.property(AwsV4HttpSigner.REGION_NAME),
                    request.property(AwsV4FamilyHttpSigner.SERVICE_SIGNING_NAME));
            return SignedRequest.builder().request(headers).payload(request.payload().orElse(null)).build();
        }

        @Override
        public CompletableFuture<AsyncSignedRequest> signAsync(AsyncSignRequest<? extends AwsCredentialsIdentity> request) {
            SdkHttpRequest headers = headers(request.request(), request.identity(), request.property(AwsV4HttpSigner.REGION_NAME),
                    request.property(AwsV4FamilyHttpSigner.SERVICE_SIGNING_NAME));
            return CompletableFuture.completedFuture(AsyncSignedRequest.builder().request(headers)
                    .payload(request.payload().orElse(null)).build());
        }
    };

    private static SdkHttpRequest headers(SdkHttpRequest request, AwsCredentialsIdentity identity, String region, String service) {
        String date = AMZ_DATE.format(ZonedDateTime.now(ZoneOffset.UTC));
        SdkHttpRequest.Builder signed = request.toBuilder()
                .putHeader("X-Amz-Date", date)
                .putHeader("Authorization", "AWS4-HMAC-SHA256 Credential=" + identity.accessKeyId() + "/" + date.substring(0, 8)
                        + "/" + region + "/" + service + "/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + UNCHECKED_SIGNATURE);
        if (identity instanceof AwsSessionCredentialsIdentity session) {
            signed.putHeader("X-Amz-Security-Token", session.sessionToken());
        }
        return signed.build();
    }
}
