package dev.runner.aws;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * AWS Signature Version 4 for a request without a query string, headers signed as given: what
 * {@link AwsJsonClient} needs, by hand, so a function does not load the SDK's signing pipeline
 * (about 650 classes). {@code SigV4Test} checks it against the SDK's own signer.
 */
final class SigV4 {

    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    private static final HexFormat HEX = HexFormat.of();

    private SigV4() {
    }

    /** {@code X-Amz-Date}'s value for an instant. */
    static String amzDate(Instant at) {
        return AMZ_DATE.format(at);
    }

    /**
     * The {@code Authorization} header's value.
     *
     * @param headers every header to sign, {@code host} and {@code x-amz-date} included (any case;
     *                {@code x-amz-date} gives the signing time)
     */
    static String authorization(String method, String path, Map<String, String> headers, byte[] body, String service,
                                String region, AwsKeys keys) {
        Map<String, String> canonical = new TreeMap<>();
        headers.forEach((name, value) -> canonical.put(name.toLowerCase(Locale.ROOT), value.trim().replaceAll(" +", " ")));
        String amzDate = canonical.get("x-amz-date");
        if (amzDate == null || amzDate.length() != 16) {
            throw new IllegalArgumentException("x-amz-date missing or not yyyyMMdd'T'HHmmss'Z': " + amzDate);
        }
        StringBuilder canonicalHeaders = new StringBuilder();
        canonical.forEach((name, value) -> canonicalHeaders.append(name).append(':').append(value).append('\n'));
        String signedHeaders = String.join(";", canonical.keySet());
        String canonicalRequest = method + '\n' + path + "\n\n" + canonicalHeaders + '\n' + signedHeaders + '\n' + hex(sha256(body));
        String date = amzDate.substring(0, 8);
        String scope = date + '/' + region + '/' + service + "/aws4_request";
        String toSign = "AWS4-HMAC-SHA256\n" + amzDate + '\n' + scope + '\n' + hex(sha256(canonicalRequest.getBytes(StandardCharsets.UTF_8)));
        byte[] key = hmac(("AWS4" + keys.secretAccessKey()).getBytes(StandardCharsets.UTF_8), date);
        key = hmac(key, region);
        key = hmac(key, service);
        key = hmac(key, "aws4_request");
        String signature = hex(hmac(key, toSign));
        return "AWS4-HMAC-SHA256 Credential=" + keys.accessKeyId() + '/' + scope + ", SignedHeaders=" + signedHeaders
                + ", Signature=" + signature;
    }

    /**
     * The {@code Authorization} header for a server on this machine (the local runtime's SQS and
     * Secrets Manager, LocalStack): it names the access key, so a server that tells callers apart by
     * their key (the local runtime's IAM mirror) still can, but nothing is hashed: no such server
     * checks a signature, and hashing every request was a measurable share of the local runtime's CPU.
     */
    static String unchecked(String amzDate, String service, String region, AwsKeys keys) {
        return "AWS4-HMAC-SHA256 Credential=" + keys.accessKeyId() + '/' + amzDate.substring(0, 8) + '/' + region + '/' + service
                + "/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + "0".repeat(64);
    }

    /** {@code X-Amz-Content-Sha256}'s value: the body's hash, which the SDK's signer sends and signs too. */
    static String contentSha256(byte[] body) {
        return hex(sha256(body));
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    private static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    private static String hex(byte[] bytes) {
        return HEX.formatHex(bytes);
    }
}
