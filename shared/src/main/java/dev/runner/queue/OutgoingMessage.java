package dev.runner.queue;

/**
 * A message to send. {@code groupId} is the tenant: on standard queues MessageGroupId turns on SQS
 * fair queues, so a noisy tenant's backlog is served after quieter tenants' messages.
 *
 * @param delaySeconds 0..900 (SQS's limit; longer waits are re-deferred when they arrive)
 */
public record OutgoingMessage(String body, int delaySeconds, String groupId) {
    public static final int MAX_DELAY_SECONDS = 900;

    public OutgoingMessage {
        if (delaySeconds < 0 || delaySeconds > MAX_DELAY_SECONDS) {
            throw new IllegalArgumentException("delaySeconds must be 0..900: " + delaySeconds);
        }
    }

    public static OutgoingMessage of(String body, String groupId) {
        return new OutgoingMessage(body, 0, groupId);
    }
}
