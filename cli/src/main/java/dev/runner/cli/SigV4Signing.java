package dev.runner.cli;

import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;

import java.net.URI;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * SigV4 for the management API of a stack deployed with ManagementAuth=iam: API Gateway's AWS_IAM
 * authorizer checks it (service {@code execute-api}). Signed by the AWS SDK's signer with the
 * default credentials chain (environment, profile, SSO, container, instance), as the AWS CLI finds them.
 */
final class SigV4Signing {

    /** The region in an API Gateway host: {@code <id>.execute-api.<region>.amazonaws.com}. */
    private static final Pattern API_GATEWAY_HOST = Pattern.compile("^[^.]+\\.execute-api\\.([a-z0-9-]+)\\.amazonaws\\.com(\\.cn)?$");
    static final String SERVICE = "execute-api";

    private final AwsV4HttpSigner signer = AwsV4HttpSigner.create();
    private final AwsCredentialsProvider credentials;
    private final String region;

    SigV4Signing(AwsCredentialsProvider credentials, String region) {
        this.credentials = credentials;
        this.region = region;
    }

    /** The default credentials; the region given, else the endpoint's, else the default region chain's. */
    static SigV4Signing forEndpoint(URI endpoint, String region) {
        String chosen = region != null ? region : regionOf(endpoint);
        if (chosen == null) {
            chosen = DefaultAwsRegionProviderChain.builder().build().getRegion().id();
        }
        return new SigV4Signing(DefaultCredentialsProvider.builder().build(), chosen);
    }

    static String regionOf(URI endpoint) {
        Matcher matcher = API_GATEWAY_HOST.matcher(endpoint.getHost() == null ? "" : endpoint.getHost());
        return matcher.matches() ? matcher.group(1) : null;
    }

    String region() {
        return region;
    }

    /** The headers of the signed request: those given, plus Authorization, X-Amz-Date and any token. */
    Map<String, String> sign(String method, URI uri, Map<String, String> headers, byte[] body) {
        SdkHttpRequest.Builder request = SdkHttpRequest.builder().uri(uri).method(SdkHttpMethod.fromValue(method));
        headers.forEach(request::putHeader);
        SignedRequest signed = signer.sign(r -> r.identity(credentials.resolveCredentials())
                .request(request.build())
                .payload(ContentStreamProvider.fromByteArray(body))
                .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, SERVICE)
                .putProperty(AwsV4HttpSigner.REGION_NAME, region));
        return ApiClient.single(signed.request().headers());
    }
}
