package dev.runner.local.lambda;

import dev.runner.functions.LambdaSerialization;

import java.io.ByteArrayInputStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Lambda runtime interface client's own serialization, as the functions use it
 * ({@link LambdaSerialization}). It turns
 * the typed events the event sources build into the JSON Lambda hands a stream handler, and the
 * handler's answer back into what the source reads. One serializer per type, built on first use
 * and shared: building one costs far more than an invocation.
 */
final class RuntimeSerialization {

    private static final Map<Class<?>, LambdaSerialization<Object>> SERIALIZERS = new ConcurrentHashMap<>();

    private RuntimeSerialization() {}

    /** Builds the serializer for {@code type} now, at start, rather than in the first invocation; fails if there is none. */
    static void prepare(Class<?> type) {
        serializer(type);
    }

    static byte[] toJson(Object value) {
        return serializer(value.getClass()).write(value);
    }

    /** @throws RuntimeException when {@code json} is not JSON of that type */
    static Object fromJson(byte[] json, Class<?> type) {
        return serializer(type).read(new ByteArrayInputStream(json));
    }

    @SuppressWarnings("unchecked")
    private static LambdaSerialization<Object> serializer(Class<?> type) {
        return SERIALIZERS.computeIfAbsent(type, t -> (LambdaSerialization<Object>) LambdaSerialization.of(t));
    }
}
