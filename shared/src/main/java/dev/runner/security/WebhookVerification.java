package dev.runner.security;

/** What {@link WebhookVerifier#verify} found: a delivery to take, or one to refuse. */
public sealed interface WebhookVerification {

    /**
     * A signature matched one of the secrets.
     *
     * @param deliveryId the scheme's identity header, for deduplication ({@code webhook-id}, {@code X-GitHub-Delivery},
     *                   {@code X-Shopify-Webhook-Id}); null when absent, and always for STRIPE, whose identity is the
     *                   event's {@code id} field in the signed body. Only trust it as a dedup key where
     *                   {@link WebhookScheme#signsIdentity()}.
     */
    record Verified(String deliveryId) implements WebhookVerification {}

    /**
     * No signature matched. Every reason answers the caller alike, and like an unknown tenant, so that the answer
     * tells a prober nothing; the reason is for the logs.
     */
    record Refused(Reason reason) implements WebhookVerification {}

    /** Why a delivery was refused; logged, never returned. */
    enum Reason {
        /** The integration has no usable webhook secret. */
        NO_SECRET,
        /** A header the scheme requires is absent or blank. */
        MISSING_HEADER,
        /** A required header is present but has no well-formed timestamp or signature of the scheme's version. */
        MALFORMED_HEADER,
        /** The signed timestamp is further from now than the tolerance, in either direction. */
        STALE,
        /** Well-formed signatures, none made with any of the secrets over this delivery. */
        MISMATCH
    }
}
