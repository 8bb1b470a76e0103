package dev.runner.queue;

/**
 * SQS's approximate counts of a queue (GetQueueAttributes): visible, received but not yet
 * deleted or back, and sent with a delay not yet over. Approximate by SQS's own definition.
 */
public record QueueDepth(long visible, long inFlight, long delayed) {}
