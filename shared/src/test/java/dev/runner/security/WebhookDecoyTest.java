package dev.runner.security;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * A webhook to a destination that does not exist costs what one with a wrong signature to a destination that does
 * costs, for every scheme a request can speak and every scheme a destination can have: the same HMACs over the same
 * bytes, so the time of the refusal does not tell which tenants exist.
 */
class WebhookDecoyTest {

    private static final Instant NOW = Instant.ofEpochSecond(1_800_000_000L);
    private static final Duration TOLERANCE = WebhookVerifier.DEFAULT_TOLERANCE;
    private static final byte[] BODY = "{\"externalId\":\"e-1\",\"id\":\"evt_1\"}".getBytes(StandardCharsets.UTF_8);
    /** What the prober signs with: not the destination's secret. */
    private static final String PROBER = "whsec_" + java.util.Base64.getEncoder().encodeToString("a prober's own key, 32 bytes!!!!".getBytes());
    private static final List<String> DESTINATION_SECRETS = List.of(StandardWebhooks.newSecret());

    @Test
    void anUnknownDestinationHashesWhatAKnownOneHashesForEverySchemeARequestSpeaks() {
        for (WebhookScheme spoken : WebhookScheme.values()) {
            Function<String, String> headers = signedAs(spoken);
            List<String> unknown = macsComputed(null, headers);
            assertEquals(List.of(spoken.wireName()), unknown, "a request signed as " + spoken + " to an unknown destination");
            for (WebhookScheme destination : WebhookScheme.values()) {
                assertEquals(unknown, macsComputed(destination, headers),
                        "a request signed as " + spoken + " to a known " + destination + " destination, with a wrong signature");
            }
        }
    }

    @Test
    void anUnknownDestinationIsRefusedAndAKnownOneVerifiesItsOwnSignature() {
        var decoy = new WebhookDecoy();
        assertInstanceOf(WebhookVerification.Refused.class,
                decoy.verify(null, List.of(), signedAs(WebhookScheme.STANDARD), BODY, NOW, TOLERANCE));
        var signed = StandardWebhooks.headers(DESTINATION_SECRETS, "msg_1", NOW.getEpochSecond(), BODY);
        assertEquals(new WebhookVerification.Verified("msg_1"),
                decoy.verify(WebhookScheme.STANDARD, DESTINATION_SECRETS, lookup(signed), BODY, NOW, TOLERANCE));
    }

    /**
     * The schemes under which a MAC was computed (a verification that got as far as comparing a MAC: verified or
     * mismatched), sorted: the work that takes time in proportion to the body.
     */
    private static List<String> macsComputed(WebhookScheme destination, Function<String, String> headers) {
        List<String> computed = new ArrayList<>();
        var decoy = new WebhookDecoy((scheme, secrets, h, body, now, tolerance) -> {
            WebhookVerification result = WebhookVerifier.verify(scheme, secrets, h, body, now, tolerance);
            boolean hashed = result instanceof WebhookVerification.Verified
                    || result instanceof WebhookVerification.Refused refused && refused.reason() == WebhookVerification.Reason.MISMATCH;
            if (hashed) {
                computed.add(scheme.wireName());
            }
            return result;
        });
        decoy.verify(destination, destination == null ? List.of() : DESTINATION_SECRETS, headers, BODY, NOW, TOLERANCE);
        computed.sort(null);
        return computed;
    }

    /** A well-formed, fresh request signed under {@code scheme} with the prober's key. */
    private static Function<String, String> signedAs(WebhookScheme scheme) {
        Map<String, String> headers = switch (scheme) {
            case STANDARD -> StandardWebhooks.headers(List.of(PROBER), "msg_1", NOW.getEpochSecond(), BODY);
            case GITHUB -> Map.of(WebhookVerifier.GITHUB_SIGNATURE_HEADER, "sha256=" + HexFormat.of().formatHex(mac(BODY)));
            case STRIPE -> Map.of(WebhookVerifier.STRIPE_SIGNATURE_HEADER, "t=" + NOW.getEpochSecond() + ",v1="
                    + HexFormat.of().formatHex(mac((NOW.getEpochSecond() + "." + new String(BODY, StandardCharsets.UTF_8))
                    .getBytes(StandardCharsets.UTF_8))));
            case SHOPIFY -> Map.of(WebhookVerifier.SHOPIFY_SIGNATURE_HEADER, java.util.Base64.getEncoder().encodeToString(mac(BODY)));
        };
        return lookup(headers);
    }

    private static Function<String, String> lookup(Map<String, String> headers) {
        Map<String, String> byName = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        byName.putAll(headers);
        return name -> byName.get(name.toLowerCase(Locale.ROOT));
    }

    private static byte[] mac(byte[] bytes) {
        return Hmac.sha256(PROBER.getBytes(StandardCharsets.UTF_8), bytes);
    }
}
