package dev.runner.security;

import dev.runner.http.ApiRequest;
import dev.runner.security.WebhookVerification.Reason;
import dev.runner.security.WebhookVerification.Refused;
import dev.runner.security.WebhookVerification.Verified;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static dev.runner.security.StandardWebhooksTest.request;
import static dev.runner.security.StandardWebhooksTest.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The providers' own schemes, each checked against the provider's documented example or, lacking one, openssl. */
class ProviderSchemesTest {

    private static final Duration TOLERANCE = WebhookVerifier.DEFAULT_TOLERANCE;
    private static final Instant ANY_TIME = Instant.ofEpochSecond(1_800_000_000L);

    // GitHub docs, "Validating webhook deliveries" > "Testing the webhook payload validation": secret
    // "It's a Secret to Everybody", payload "Hello, World!". Recomputed with
    //   printf '%s' 'Hello, World!' | openssl dgst -sha256 -hmac "It's a Secret to Everybody"
    private static final String GITHUB_SECRET = "It's a Secret to Everybody";
    private static final byte[] GITHUB_BODY = utf8("Hello, World!");
    private static final String GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
    private static final String GITHUB_DELIVERY = "72d3162e-cc78-11e3-81ab-4c9367dc0958";

    // Stripe documents the scheme (t=, v1= hex HMAC-SHA256 of "{t}.{body}") but publishes no vector with its
    // secret. Secret and payload are stripe-java's WebhookTest fixture, t the one in Stripe's docs' example
    // header; the signature computed with openssl, keyed with the whole secret as stripe-java's
    // Webhook.Util.computeHmacSha256 does (a whsec_ Stripe secret is not base64-decoded):
    //   printf '1492774577.{\n  "id": "evt_test_webhook",\n  "object": "event"\n}' | openssl dgst -sha256 -hmac 'whsec_test_secret'
    private static final String STRIPE_SECRET = "whsec_test_secret";
    private static final byte[] STRIPE_BODY = utf8("{\n  \"id\": \"evt_test_webhook\",\n  \"object\": \"event\"\n}");
    private static final long STRIPE_T = 1492774577L;
    private static final String STRIPE_V1 = "c2f890decbc5ede7c5060bb9a6d31e0626a4342bacb9aeae2adb1bcea72f9812";
    private static final Instant STRIPE_NOW = Instant.ofEpochSecond(STRIPE_T + 10);

    // Shopify documents the scheme (base64 HMAC-SHA256 of the raw body with the app's client secret) but
    // publishes no vector; this one is computed with openssl:
    //   printf '%s' '{"id":820982911946154508,"email":"jon@example.com","topic":"orders/create"}' \
    //     | openssl dgst -sha256 -hmac 'shpss_It-is-a-Shopify-app-secret' -binary | base64
    private static final String SHOPIFY_SECRET = "shpss_It-is-a-Shopify-app-secret";
    private static final byte[] SHOPIFY_BODY = utf8("{\"id\":820982911946154508,\"email\":\"jon@example.com\",\"topic\":\"orders/create\"}");
    private static final String SHOPIFY_HMAC = "CZ52drvs1wOhd/QN0TTbdttR+uZjk66g42UBt0XYEeg=";
    private static final String SHOPIFY_WEBHOOK_ID = "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043";

    @Test
    void githubVerifiesItsDocumentedExampleAndYieldsTheDeliveryHeader() {
        assertEquals(new Verified(GITHUB_DELIVERY), verify(WebhookScheme.GITHUB, List.of(GITHUB_SECRET),
                Map.of("X-Hub-Signature-256", GITHUB_SIGNATURE, "X-GitHub-Delivery", GITHUB_DELIVERY), GITHUB_BODY, ANY_TIME));
        assertEquals(new Verified(null), verify(WebhookScheme.GITHUB, List.of("previous-secret-0123", GITHUB_SECRET),
                Map.of("x-hub-signature-256", GITHUB_SIGNATURE), GITHUB_BODY, ANY_TIME));
    }

    @Test
    void githubRefusesAnotherSecretBodyOrFormat() {
        assertEquals(new Refused(Reason.MISMATCH), verify(WebhookScheme.GITHUB, List.of("It's a Secret to Nobody"),
                Map.of("X-Hub-Signature-256", GITHUB_SIGNATURE), GITHUB_BODY, ANY_TIME));
        assertEquals(new Refused(Reason.MISMATCH), verify(WebhookScheme.GITHUB, List.of(GITHUB_SECRET),
                Map.of("X-Hub-Signature-256", GITHUB_SIGNATURE), utf8("Hello, World?"), ANY_TIME));
        assertEquals(new Refused(Reason.MALFORMED_HEADER), verify(WebhookScheme.GITHUB, List.of(GITHUB_SECRET),
                Map.of("X-Hub-Signature-256", "sha1=" + GITHUB_SIGNATURE.substring(7)), GITHUB_BODY, ANY_TIME));
        assertEquals(new Refused(Reason.MALFORMED_HEADER), verify(WebhookScheme.GITHUB, List.of(GITHUB_SECRET),
                Map.of("X-Hub-Signature-256", "sha256=xyz"), GITHUB_BODY, ANY_TIME));
        // X-Hub-Signature (SHA-1) is not the header this scheme reads.
        assertEquals(new Refused(Reason.MISSING_HEADER), verify(WebhookScheme.GITHUB, List.of(GITHUB_SECRET),
                Map.of("X-Hub-Signature", GITHUB_SIGNATURE), GITHUB_BODY, ANY_TIME));
    }

    @Test
    void stripeVerifiesAndLeavesTheIdentityToTheBody() {
        assertEquals(new Verified(null), verify(WebhookScheme.STRIPE, List.of(STRIPE_SECRET),
                Map.of("Stripe-Signature", "t=" + STRIPE_T + ",v1=" + STRIPE_V1), STRIPE_BODY, STRIPE_NOW));
    }

    @Test
    void stripeFindsItsV1AmongSeveralAndIgnoresV0() {
        String header = "t=" + STRIPE_T + ",v1=" + "00".repeat(32) + ",v0=6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39,v1="
                + STRIPE_V1 + ",v1=not-hex";
        assertEquals(new Verified(null), verify(WebhookScheme.STRIPE, List.of("whsec_rotated_out", STRIPE_SECRET),
                Map.of("Stripe-Signature", header), STRIPE_BODY, STRIPE_NOW));
        assertEquals(new Refused(Reason.MALFORMED_HEADER), verify(WebhookScheme.STRIPE, List.of(STRIPE_SECRET),
                Map.of("Stripe-Signature", "t=" + STRIPE_T + ",v0=" + STRIPE_V1), STRIPE_BODY, STRIPE_NOW));
    }

    @Test
    void stripeKeysWithTheWholeSecretEvenWhenItReadsAsBase64() {
        // A whsec_ secret whose tail is base64 ("secret-secret-secret"): Stripe keys with the whole string,
        // Standard Webhooks would key with the decoded bytes.
        //   printf '1492774577.{\n  "id": "evt_test_webhook",\n  "object": "event"\n}' | openssl dgst -sha256 -hmac <key>
        String secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=";
        String keyedWithWholeSecret = "0929d9221b76d7729e1923147697f96ac6ed31702af5fe070928894664746fac";
        String keyedWithDecodedTail = "f56930d1cebcbb46568c267067db3cb0020050e6afdfaa8268ca66e81080f68d";
        assertEquals(new Verified(null), verify(WebhookScheme.STRIPE, List.of(secret),
                Map.of("Stripe-Signature", "t=" + STRIPE_T + ",v1=" + keyedWithWholeSecret), STRIPE_BODY, STRIPE_NOW));
        assertEquals(new Refused(Reason.MISMATCH), verify(WebhookScheme.STRIPE, List.of(secret),
                Map.of("Stripe-Signature", "t=" + STRIPE_T + ",v1=" + keyedWithDecodedTail), STRIPE_BODY, STRIPE_NOW));
        assertEquals(new Refused(Reason.MISMATCH), verify(WebhookScheme.STRIPE, List.of("whsec_other_secret"),
                Map.of("Stripe-Signature", "t=" + STRIPE_T + ",v1=" + STRIPE_V1), STRIPE_BODY, STRIPE_NOW));
    }

    @Test
    void stripeRefusesAStaleOrAlteredTimestamp() {
        Map<String, String> headers = Map.of("Stripe-Signature", "t=" + STRIPE_T + ",v1=" + STRIPE_V1);
        assertEquals(new Refused(Reason.STALE), verify(WebhookScheme.STRIPE, List.of(STRIPE_SECRET), headers, STRIPE_BODY,
                Instant.ofEpochSecond(STRIPE_T + 301)));
        assertEquals(new Refused(Reason.STALE), verify(WebhookScheme.STRIPE, List.of(STRIPE_SECRET), headers, STRIPE_BODY,
                Instant.ofEpochSecond(STRIPE_T - 301)));
        assertEquals(new Refused(Reason.MISMATCH), verify(WebhookScheme.STRIPE, List.of(STRIPE_SECRET),
                Map.of("Stripe-Signature", "t=" + (STRIPE_T + 1) + ",v1=" + STRIPE_V1), STRIPE_BODY, STRIPE_NOW));
    }

    @Test
    void stripeRefusesAHeaderWithoutExactlyOneTimestampOrAnyV1() {
        for (String header : List.of("v1=" + STRIPE_V1, "t=" + STRIPE_T, "t=soon,v1=" + STRIPE_V1,
                "t=" + STRIPE_T + ",t=" + STRIPE_T + ",v1=" + STRIPE_V1, "i'm not even a real signature header")) {
            assertEquals(new Refused(Reason.MALFORMED_HEADER), verify(WebhookScheme.STRIPE, List.of(STRIPE_SECRET),
                    Map.of("Stripe-Signature", header), STRIPE_BODY, STRIPE_NOW), header);
        }
        assertEquals(new Refused(Reason.MISSING_HEADER), verify(WebhookScheme.STRIPE, List.of(STRIPE_SECRET),
                Map.of(), STRIPE_BODY, STRIPE_NOW));
    }

    @Test
    void shopifyVerifiesAndYieldsTheWebhookIdHeader() {
        assertEquals(new Verified(SHOPIFY_WEBHOOK_ID), verify(WebhookScheme.SHOPIFY, List.of(SHOPIFY_SECRET),
                Map.of("X-Shopify-Hmac-SHA256", SHOPIFY_HMAC, "X-Shopify-Webhook-Id", SHOPIFY_WEBHOOK_ID), SHOPIFY_BODY, ANY_TIME));
    }

    @Test
    void shopifyRefusesAnotherSecretBodyOrEncoding() {
        Map<String, String> headers = Map.of("X-Shopify-Hmac-Sha256", SHOPIFY_HMAC);
        assertEquals(new Refused(Reason.MISMATCH), verify(WebhookScheme.SHOPIFY, List.of("shpss_another-app-secret"), headers,
                SHOPIFY_BODY, ANY_TIME));
        assertEquals(new Refused(Reason.MISMATCH), verify(WebhookScheme.SHOPIFY, List.of(SHOPIFY_SECRET), headers,
                utf8("{\"id\":820982911946154509}"), ANY_TIME));
        assertEquals(new Refused(Reason.MALFORMED_HEADER), verify(WebhookScheme.SHOPIFY, List.of(SHOPIFY_SECRET),
                Map.of("X-Shopify-Hmac-Sha256", "%%%"), SHOPIFY_BODY, ANY_TIME));
    }

    @Test
    void theSchemesThatSignNoTimeAcceptAnOldDelivery() {
        // What GitHub and Shopify sign cannot expire: replays are for the delivery dedup to catch.
        assertEquals(new Verified(null), verify(WebhookScheme.SHOPIFY, List.of(SHOPIFY_SECRET),
                Map.of("X-Shopify-Hmac-Sha256", SHOPIFY_HMAC), SHOPIFY_BODY, Instant.EPOCH));
        assertEquals(new Verified(null), verify(WebhookScheme.GITHUB, List.of(GITHUB_SECRET),
                Map.of("X-Hub-Signature-256", GITHUB_SIGNATURE), GITHUB_BODY, Instant.MAX));
    }

    private static WebhookVerification verify(WebhookScheme scheme, List<String> secrets, Map<String, String> headers,
                                              byte[] body, Instant now) {
        ApiRequest request = request(headers, body);
        return WebhookVerifier.verify(scheme, secrets, request::header, request.body(), now, TOLERANCE);
    }
}
