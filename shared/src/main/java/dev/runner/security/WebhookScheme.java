package dev.runner.security;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How an integration type's webhooks are signed, chosen per type by its JSON field {@code webhookScheme}
 * ({@link #fromWire}). Each verifies an HMAC-SHA256 with the tenant integration's webhook secret; they
 * differ in what the MAC covers, which is what a replay can change without breaking it.
 */
public enum WebhookScheme {
    /** Standard Webhooks: {@code webhook-signature: v1,<base64 HMAC("{webhook-id}.{webhook-timestamp}.{body}")>}. */
    STANDARD(true, true),
    /** GitHub: {@code X-Hub-Signature-256: sha256=<hex HMAC(body)>}; {@code X-GitHub-Delivery} is not signed. */
    GITHUB(false, false),
    /** Stripe: {@code Stripe-Signature: t=<ts>,v1=<hex HMAC("{t}.{body}")>}; the identity is the event's {@code id} in the body. */
    STRIPE(true, true),
    /** Shopify: {@code X-Shopify-Hmac-Sha256: <base64 HMAC(body)>}; {@code X-Shopify-Webhook-Id} is not signed. */
    SHOPIFY(false, false);

    /** The scheme of a type that names none. */
    public static final WebhookScheme DEFAULT = STANDARD;

    /** Whether the MAC covers the delivery's identity; if not, one replayed under another id header still verifies. */
    private final boolean signsIdentity;
    /** Whether the MAC covers a timestamp, so that a capture is refused once it is older than the tolerance. */
    private final boolean signsTime;

    WebhookScheme(boolean signsIdentity, boolean signsTime) {
        this.signsIdentity = signsIdentity;
        this.signsTime = signsTime;
    }

    public boolean signsIdentity() {
        return signsIdentity;
    }

    public boolean signsTime() {
        return signsTime;
    }

    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The value of {@code webhookScheme}; absent (null) means {@link #DEFAULT}. */
    public static WebhookScheme fromWire(String value) {
        if (value == null) {
            return DEFAULT;
        }
        for (WebhookScheme scheme : values()) {
            if (scheme.wireName().equals(value)) {
                return scheme;
            }
        }
        throw new IllegalArgumentException("webhookScheme must be one of "
                + Arrays.stream(values()).map(WebhookScheme::wireName).collect(Collectors.joining(", ")) + ": " + value);
    }
}
