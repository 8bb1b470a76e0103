package dev.runner.cost;

/**
 * Hears what each unit of work costs at the servers: Redis round trips and commands, Postgres
 * statements, SQS requests, handler calls. The clients call it; what it does with the counts is
 * the tracker's business (benchmarks and cost tests count, production ignores them). A plug, as
 * HikariCP's IMetricsTracker: the default does nothing.
 */
public interface CostTracker {

    /** Ignores everything. */
    CostTracker NONE = new CostTracker() {};

    /** One round trip to Redis carrying {@code commands} commands (a pipeline is one round trip). */
    default void redisRoundTrip(int commands) {}

    /** One statement sent to Postgres. */
    default void sqlStatement() {}

    /** One request to SQS (a batch request is one). */
    default void sqsRequest() {}

    /** One HTTP call to a handler service. */
    default void handlerCall() {}
}
