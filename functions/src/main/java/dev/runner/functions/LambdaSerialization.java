package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.serialization.PojoSerializer;
import com.amazonaws.services.lambda.runtime.serialization.events.LambdaEventSerializers;
import com.amazonaws.services.lambda.runtime.serialization.factories.JacksonFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;

/**
 * Lambda's events and answers as the runtime client reads and writes them for a typed handler
 * (aws-lambda-java-serialization): the event library's classes with their mix-ins, anything else
 * plain Jackson. The functions take their event as a stream and hold their own serializer, built at
 * init, so the SnapStart hooks can prime it with a canned event ({@code events/<Type>.json} beside
 * this class) and a restored first invocation finds it ready; the local runtime and the tests speak
 * to the functions through the same choice.
 *
 * @param <T> the event or answer type
 */
public final class LambdaSerialization<T> {

    private final Class<T> type;
    private final PojoSerializer<T> serializer;

    private LambdaSerialization(Class<T> type, PojoSerializer<T> serializer) {
        this.type = type;
        this.serializer = serializer;
    }

    /** The runtime client's serializer for {@code type}; building one loads its classes, so build it once. */
    @SuppressWarnings("unchecked")
    public static <T> LambdaSerialization<T> of(Class<T> type) {
        PojoSerializer<T> serializer = LambdaEventSerializers.isLambdaSupportedEvent(type.getName())
                ? LambdaEventSerializers.serializerFor(type, LambdaSerialization.class.getClassLoader())
                : (PojoSerializer<T>) JacksonFactory.getInstance().getSerializer(type);
        return new LambdaSerialization<>(type, serializer);
    }

    /** @throws RuntimeException when the stream does not hold JSON of this type */
    public T read(InputStream json) {
        return serializer.fromJson(json);
    }

    public void write(T value, OutputStream json) {
        serializer.toJson(value, json);
    }

    public byte[] write(T value) {
        var json = new ByteArrayOutputStream(1024);
        write(value, json);
        return json.toByteArray();
    }

    /** Reads the canned value of this type and writes it again: what the first real one would load and build, done now. */
    void prime() {
        String canned = "events/" + type.getSimpleName() + ".json";
        try (InputStream json = LambdaSerialization.class.getResourceAsStream(canned)) {
            if (json == null) {
                throw new IllegalStateException("no canned " + canned + " to prime the serializer with");
            }
            write(read(json), OutputStream.nullOutputStream());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + canned, e);
        }
    }

    /** An event's map of strings (headers, attributes) without its null keys and values; empty for null. */
    static Map<String, String> withoutNulls(Map<String, String> map) {
        Map<String, String> copy = new HashMap<>();
        if (map != null) {
            map.forEach((key, value) -> {
                if (key != null && value != null) {
                    copy.put(key, value);
                }
            });
        }
        return copy;
    }
}
