package dev.runner.cost;

import java.util.concurrent.atomic.LongAdder;

/** A tracker that counts: what benchmarks and cost tests read, as snapshots to subtract. */
public final class CostMeter implements CostTracker {

    /** Counts at one moment; {@link #minus} gives what happened between two. */
    public record Costs(long redisRoundTrips, long redisCommands, long sqlStatements, long sqsRequests, long handlerCalls) {
        public Costs minus(Costs earlier) {
            return new Costs(redisRoundTrips - earlier.redisRoundTrips, redisCommands - earlier.redisCommands,
                    sqlStatements - earlier.sqlStatements, sqsRequests - earlier.sqsRequests, handlerCalls - earlier.handlerCalls);
        }
    }

    private final LongAdder redisRoundTrips = new LongAdder();
    private final LongAdder redisCommands = new LongAdder();
    private final LongAdder sqlStatements = new LongAdder();
    private final LongAdder sqsRequests = new LongAdder();
    private final LongAdder handlerCalls = new LongAdder();

    @Override
    public void redisRoundTrip(int commands) {
        redisRoundTrips.increment();
        redisCommands.add(commands);
    }

    @Override
    public void sqlStatement() {
        sqlStatements.increment();
    }

    @Override
    public void sqsRequest() {
        sqsRequests.increment();
    }

    @Override
    public void handlerCall() {
        handlerCalls.increment();
    }

    public Costs snapshot() {
        return new Costs(redisRoundTrips.sum(), redisCommands.sum(), sqlStatements.sum(), sqsRequests.sum(), handlerCalls.sum());
    }
}
