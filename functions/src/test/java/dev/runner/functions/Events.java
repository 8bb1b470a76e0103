package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.serialization.events.LambdaEventSerializers;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** The events/ samples, read with the Lambda runtime's own serialization, as AWS would hand them over. */
final class Events {

    private static final Path DIR = Path.of("..", "events");

    private Events() {}

    static <T> T load(String file, Class<T> type) {
        try (InputStream in = Files.newInputStream(DIR.resolve(file))) {
            return LambdaEventSerializers.serializerFor(type, Events.class.getClassLoader()).fromJson(in);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read events/" + file, e);
        }
    }
}
