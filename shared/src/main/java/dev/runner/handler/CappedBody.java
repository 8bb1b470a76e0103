package dev.runner.handler;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Reads a response body up to a limit and stops there: past it, the rest is never read (the
 * connection is dropped), so a handler's 50 MB answer costs at most the limit in memory. The
 * body completes with what was read and whether there was more.
 */
final class CappedBody implements HttpResponse.BodySubscriber<CappedBody.Body> {

    /** @param overLimit true when the handler sent (or announced) more than the limit; {@code bytes} is then the first part */
    record Body(byte[] bytes, boolean overLimit) {}

    private final int limit;
    private final long announced;
    private final ByteArrayOutputStream read = new ByteArrayOutputStream();
    private final AtomicReference<Flow.Subscription> subscription = new AtomicReference<>();
    private final CompletableFuture<Body> body = new CompletableFuture<>();

    /** @param announced the Content-Length the handler sent, if any: a body announced too long is not read at all */
    CappedBody(int limit, OptionalLong announced) {
        this.limit = limit;
        this.announced = announced.orElse(-1);
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        if (!subscription.compareAndSet(null, s)) {
            s.cancel();
            return;
        }
        if (announced > limit) {
            stopOverLimit();
            return;
        }
        // All at once: the limit, not demand, bounds what is kept; asking buffer by buffer only slows reading.
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> buffers) {
        if (body.isDone()) {
            return;
        }
        for (ByteBuffer buffer : buffers) {
            int room = limit - read.size();
            if (buffer.remaining() > room) {
                append(buffer, room);
                stopOverLimit();
                return;
            }
            append(buffer, buffer.remaining());
        }
    }

    @Override
    public void onError(Throwable error) {
        body.completeExceptionally(error);
    }

    @Override
    public void onComplete() {
        body.complete(new Body(read.toByteArray(), false));
    }

    @Override
    public CompletionStage<Body> getBody() {
        return body;
    }

    /** Stops reading now (the call's deadline passed): the connection is dropped. */
    void abort() {
        Flow.Subscription s = subscription.get();
        if (s != null) {
            s.cancel();
        }
        body.completeExceptionally(new CancellationException("handler call abandoned at its deadline"));
    }

    private void append(ByteBuffer buffer, int length) {
        byte[] chunk = new byte[length];
        buffer.get(chunk);
        read.write(chunk, 0, length);
    }

    private void stopOverLimit() {
        subscription.get().cancel();
        body.complete(new Body(read.toByteArray(), true));
    }
}
