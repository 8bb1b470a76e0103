package dev.runner.security;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Checks a webhook so that its refusal takes the same work whether its destination is known or not, whatever the
 * scheme (docs/security.md, webhook endpoint under flood). Every scheme whose signature header the request carries
 * is verified: the destination's own with its secrets, each other one against a random decoy secret; a destination
 * that cannot take the request (an unknown tenant or integration, a disabled one, one with no secret) has only
 * decoys. So a GitHub-, Stripe- or Shopify-signed request to an unknown path hashes its body as one to a known path
 * does, and the time of the answer does not tell which tenants exist.
 */
public final class WebhookDecoy {

    /** Each scheme by the header that carries its signature. */
    private static final Map<String, WebhookScheme> SCHEMES_BY_HEADER = schemesByHeader();
    private static final WebhookVerification NO_DESTINATION = new WebhookVerification.Refused(WebhookVerification.Reason.NO_SECRET);

    /** One verification under one scheme: {@link WebhookVerifier#verify}, or a test's recording of it. */
    @FunctionalInterface
    interface Verifier {
        WebhookVerification verify(WebhookScheme scheme, List<String> secrets, Function<String, String> headers, byte[] body,
                                   Instant now, Duration tolerance);
    }

    private final Verifier verifier;
    private final List<String> decoySecrets;

    public WebhookDecoy() {
        this(WebhookVerifier::verify);
    }

    WebhookDecoy(Verifier verifier) {
        this.verifier = verifier;
        byte[] decoy = new byte[32];
        new SecureRandom().nextBytes(decoy);
        this.decoySecrets = List.of(StandardWebhooks.SECRET_PREFIX + Base64.getEncoder().encodeToString(decoy));
    }

    /**
     * Verifies the request for a destination that signs with {@code scheme} and {@code secrets}, or, with
     * {@code scheme} null, for one that cannot take it: then the answer is a refusal, after the same work.
     */
    public WebhookVerification verify(WebhookScheme scheme, List<String> secrets, Function<String, String> headers, byte[] body,
                                      Instant now, Duration tolerance) {
        WebhookVerification verification = scheme == null
                ? NO_DESTINATION
                : verifier.verify(scheme, secrets, headers, body, now, tolerance);
        for (WebhookScheme spoken : spokenBy(headers)) {
            if (spoken != scheme) {
                verifier.verify(spoken, decoySecrets, headers, body, now, tolerance);
            }
        }
        return verification;
    }

    /** The schemes whose signature header the request carries; Standard Webhooks when it carries none. */
    static Set<WebhookScheme> spokenBy(Function<String, String> headers) {
        Set<WebhookScheme> spoken = EnumSet.noneOf(WebhookScheme.class);
        SCHEMES_BY_HEADER.forEach((header, scheme) -> {
            String value = headers.apply(header);
            if (value != null && !value.isBlank()) {
                spoken.add(scheme);
            }
        });
        return spoken.isEmpty() ? EnumSet.of(WebhookScheme.STANDARD) : spoken;
    }

    private static Map<String, WebhookScheme> schemesByHeader() {
        Map<String, WebhookScheme> schemes = new LinkedHashMap<>();
        schemes.put(StandardWebhooks.SIGNATURE_HEADER, WebhookScheme.STANDARD);
        schemes.put(WebhookVerifier.GITHUB_SIGNATURE_HEADER, WebhookScheme.GITHUB);
        schemes.put(WebhookVerifier.STRIPE_SIGNATURE_HEADER, WebhookScheme.STRIPE);
        schemes.put(WebhookVerifier.SHOPIFY_SIGNATURE_HEADER, WebhookScheme.SHOPIFY);
        return schemes;
    }
}
