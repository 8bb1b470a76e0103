package dev.runner.bench;

import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts every SQS request this JVM makes, by operation: the functions' sends and visibility
 * changes and the local event source mappings' receives and deletes alike. Registered as an SDK
 * global interceptor (resource software/amazon/awssdk/global/handlers/execution.interceptors), so
 * nothing in Runner knows it is being measured.
 */
public final class SqsRequestCounter implements ExecutionInterceptor {

    private static final Map<String, LongAdder> BY_OPERATION = new ConcurrentHashMap<>();

    @Override
    public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        String operation = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
        BY_OPERATION.computeIfAbsent(operation == null ? "?" : operation, o -> new LongAdder()).increment();
    }

    public static Map<String, Long> snapshot() {
        Map<String, Long> counts = new TreeMap<>();
        BY_OPERATION.forEach((operation, count) -> counts.put(operation, count.sum()));
        return counts;
    }

    public static long total(Map<String, Long> snapshot) {
        return snapshot.values().stream().mapToLong(Long::longValue).sum();
    }

    /** What happened between two snapshots. */
    public static Map<String, Long> since(Map<String, Long> before) {
        Map<String, Long> now = snapshot();
        Map<String, Long> delta = new TreeMap<>();
        now.forEach((operation, count) -> {
            long d = count - before.getOrDefault(operation, 0L);
            if (d > 0) {
                delta.put(operation, d);
            }
        });
        return delta;
    }
}
