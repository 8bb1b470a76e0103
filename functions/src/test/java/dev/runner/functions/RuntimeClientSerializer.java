package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.serialization.PojoSerializer;
import com.amazonaws.services.lambda.runtime.serialization.events.LambdaEventSerializers;
import com.amazonaws.services.lambda.runtime.serialization.factories.JacksonFactory;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Lambda runtime interface client's own serializer (aws-lambda-java-serialization), as it reads
 * and writes a typed handler's event and answer: how Lambda's JSON and the event library's classes
 * meet, which {@link LambdaSerialization} follows. The tests write events with it and read answers
 * with it, as Lambda would.
 */
final class RuntimeClientSerializer {

    private static final Map<Class<?>, PojoSerializer<Object>> SERIALIZERS = new ConcurrentHashMap<>();

    private RuntimeClientSerializer() {}

    static byte[] write(Object value) {
        var json = new ByteArrayOutputStream(1024);
        of(value.getClass()).toJson(value, json);
        return json.toByteArray();
    }

    static <T> T read(byte[] json, Class<T> type) {
        return type.cast(of(type).fromJson(new ByteArrayInputStream(json)));
    }

    /** The event library's classes with the client's mix-ins, anything else its plain Jackson. */
    @SuppressWarnings("unchecked")
    private static PojoSerializer<Object> of(Class<?> type) {
        return SERIALIZERS.computeIfAbsent(type, t -> LambdaEventSerializers.isLambdaSupportedEvent(t.getName())
                ? (PojoSerializer<Object>) LambdaEventSerializers.serializerFor(t, RuntimeClientSerializer.class.getClassLoader())
                : (PojoSerializer<Object>) JacksonFactory.getInstance().getSerializer(t));
    }
}
