package dev.runner.bench.coldstart;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A baseline that takes the event as bytes: the runtime client loads no serializer at all. Beside
 * {@link HelloFunction} it shows what the client's POJO serialization costs a handler.
 */
public final class HelloStreamFunction implements RequestStreamHandler {

    @Override
    public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
        int size = input.readAllBytes().length;
        output.write(("\"hello " + size + "\"").getBytes(StandardCharsets.UTF_8));
    }
}
