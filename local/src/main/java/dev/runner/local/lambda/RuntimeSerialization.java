package dev.runner.local.lambda;

import com.amazonaws.services.lambda.runtime.serialization.PojoSerializer;
import com.amazonaws.services.lambda.runtime.serialization.events.LambdaEventSerializers;
import com.amazonaws.services.lambda.runtime.serialization.factories.JacksonFactory;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Lambda runtime interface client's own serialization (aws-lambda-java-serialization), as Lambda
 * writes the events it hands a function: it turns the typed events the event sources build into
 * that JSON, and the handler's answer back into what the source reads. The functions read and write
 * with Jackson of their own ({@code LambdaSerialization}), so every invocation here also checks that
 * they read what Lambda writes. One serializer per type, built on first use and shared: building one
 * costs far more than an invocation.
 */
final class RuntimeSerialization {

    private static final Map<Class<?>, PojoSerializer<Object>> SERIALIZERS = new ConcurrentHashMap<>();

    private RuntimeSerialization() {}

    /** Builds the serializer for {@code type} now, at start, rather than in the first invocation; fails if there is none. */
    static void prepare(Class<?> type) {
        serializer(type);
    }

    static byte[] toJson(Object value) {
        var json = new ByteArrayOutputStream(1024);
        serializer(value.getClass()).toJson(value, json);
        return json.toByteArray();
    }

    /** @throws RuntimeException when {@code json} is not JSON of that type */
    static Object fromJson(byte[] json, Class<?> type) {
        return serializer(type).fromJson(new ByteArrayInputStream(json));
    }

    /** What the runtime client builds for a typed handler of {@code type}: the event library's with their mix-ins, else plain Jackson. */
    @SuppressWarnings("unchecked")
    private static PojoSerializer<Object> serializer(Class<?> type) {
        return SERIALIZERS.computeIfAbsent(type, t -> LambdaEventSerializers.isLambdaSupportedEvent(t.getName())
                ? (PojoSerializer<Object>) LambdaEventSerializers.serializerFor(t, RuntimeSerialization.class.getClassLoader())
                : (PojoSerializer<Object>) JacksonFactory.getInstance().getSerializer(t));
    }
}
