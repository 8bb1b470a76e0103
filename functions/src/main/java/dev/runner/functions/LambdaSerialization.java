package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.CloudFormationCustomResourceEvent;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.joda.JodaModule;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Lambda's events and answers in the event library's classes ({@code SQSEvent} in, {@code
 * SQSBatchResponse} out, the HTTP API's event and answer, {@code ScheduledEvent}, the custom
 * resource's event), read and written with Jackson's data binding as the runtime interface client
 * reads and writes them for a typed handler: the same bean naming, unknown fields ignored, nulls
 * left out, the same renames the client's mix-ins make where Lambda's JSON does not follow the
 * classes' getters ({@code Records}, {@code eventSourceARN}, {@code detail-type}, the custom
 * resource's PascalCase), and Joda-Time's module for {@code ScheduledEvent}'s time. The client's own
 * serializer (aws-lambda-java-serialization, with its shaded copy of Jackson, Joda-Time's and its
 * own modules) is not used: the functions take their event as a stream, and reading it with the
 * Jackson they load anyway keeps its classes out of every function's snapshot
 * (docs/architecture.md). {@code LambdaSerializationTest} reads every sample event both ways and
 * compares.
 *
 * <p>Built once per type and function instance, at init, so the SnapStart hooks can prime it with a
 * canned value ({@code events/<Type>.json} beside this class) and a restored first invocation finds
 * its deserializers built.
 *
 * @param <T> the event or answer type
 */
public final class LambdaSerialization<T> {

    /** One mapper for every type: its deserializers, once built, are shared by the readers. */
    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(MapperFeature.USE_STD_BEAN_NAMING)
            .disable(MapperFeature.AUTO_DETECT_CREATORS)
            .disable(MapperFeature.INFER_PROPERTY_MUTATORS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .serializationInclusion(JsonInclude.Include.NON_NULL)
            .addMixIn(SQSEvent.class, SqsEventNames.class)
            .addMixIn(SQSEvent.SQSMessage.class, SqsMessageNames.class)
            .addMixIn(ScheduledEvent.class, ScheduledEventNames.class)
            .addMixIn(CloudFormationCustomResourceEvent.class, CustomResourceNames.class)
            .build();

    /** With Joda-Time's module, for ScheduledEvent's time only: the scheduler's, not every function's classes. */
    private static final class WithJoda {
        static final ObjectMapper MAPPER = LambdaSerialization.MAPPER.copy().registerModule(new JodaModule());
    }

    private final Class<T> type;
    private final ObjectReader reader;
    private final ObjectWriter writer;

    private LambdaSerialization(Class<T> type) {
        this.type = type;
        ObjectMapper mapper = type == ScheduledEvent.class ? WithJoda.MAPPER : MAPPER;
        this.reader = mapper.readerFor(type);
        this.writer = mapper.writerFor(type);
    }

    /** The reader and writer of {@code type}; build it once, at init. */
    public static <T> LambdaSerialization<T> of(Class<T> type) {
        return new LambdaSerialization<>(type);
    }

    /** @throws RuntimeException when the stream does not hold JSON of this type */
    public T read(InputStream json) {
        try {
            return reader.readValue(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void write(T value, OutputStream json) {
        try {
            writer.writeValue(json, value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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

    /** Lambda's names where SQSEvent's getters say otherwise. */
    private abstract static class SqsEventNames {
        @JsonProperty("Records")
        abstract List<SQSEvent.SQSMessage> getRecords();

        @JsonProperty("Records")
        abstract void setRecords(List<SQSEvent.SQSMessage> records);
    }

    private abstract static class SqsMessageNames {
        @JsonProperty("eventSourceARN")
        abstract String getEventSourceArn();

        @JsonProperty("eventSourceARN")
        abstract void setEventSourceArn(String arn);
    }

    private abstract static class ScheduledEventNames {
        @JsonProperty("detail-type")
        abstract String getDetailType();

        @JsonProperty("detail-type")
        abstract void setDetailType(String detailType);
    }

    /** CloudFormation names a custom resource's fields in PascalCase ({@code RequestType}, {@code ResponseURL}, …). */
    @JsonNaming(PropertyNamingStrategies.UpperCamelCaseStrategy.class)
    private abstract static class CustomResourceNames {
        @JsonProperty("ResponseURL")
        abstract String getResponseUrl();

        @JsonProperty("ResponseURL")
        abstract void setResponseUrl(String url);
    }
}
