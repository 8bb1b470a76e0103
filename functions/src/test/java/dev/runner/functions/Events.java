package dev.runner.functions;


import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** The events/ samples, read as the functions read what Lambda hands them ({@link LambdaSerialization}). */
final class Events {

    private static final Path DIR = Path.of("..", "events");

    private Events() {}

    static <T> T load(String file, Class<T> type) {
        try (InputStream in = Files.newInputStream(DIR.resolve(file))) {
            return LambdaSerialization.of(type).read(in);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read events/" + file, e);
        }
    }
}
