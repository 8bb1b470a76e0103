package dev.runner.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Commands (script calls, plain reads) of several requests sent in one {@link Redis#run} (one
 * round trip), each request decoding its own replies: a codec builds the requests, its caller adds
 * them, runs the pipeline once and reads each answer.
 */
public final class Pipeline {

    /** Script calls whose replies, in order, decode into one answer. */
    public record Request<T>(List<Redis.Call> calls, Function<List<Object>, T> decode) {
        public Request {
            calls = List.copyOf(calls);
            Objects.requireNonNull(decode, "decode");
        }

        public static <T> Request<T> of(Redis.Call call, Function<Object, T> decode) {
            return new Request<>(List.of(call), replies -> decode.apply(replies.getFirst()));
        }
    }

    /** A request's answer, readable once the pipeline has run. */
    public static final class Reply<T> {
        private T value;
        private boolean decoded;

        public T get() {
            if (!decoded) {
                throw new IllegalStateException("the pipeline has not run");
            }
            return value;
        }

        private void set(T value) {
            this.value = value;
            this.decoded = true;
        }
    }

    private record Entry<T>(int size, Function<List<Object>, T> decode, Reply<T> reply) {
        void decode(List<Object> replies) {
            reply.set(decode.apply(replies));
        }
    }

    private final List<Redis.Command> calls = new ArrayList<>();
    private final List<Entry<?>> entries = new ArrayList<>();

    public <T> Reply<T> add(Request<T> request) {
        Reply<T> reply = new Reply<>();
        entries.add(new Entry<>(request.calls().size(), request.decode(), reply));
        calls.addAll(request.calls());
        return reply;
    }

    /** A plain read in the same round trip; its reply as Redis gives it (a map for HGETALL, a Long for ZCOUNT). */
    public Reply<Object> read(Redis.Read read) {
        Reply<Object> reply = new Reply<>();
        entries.add(new Entry<>(1, List::getFirst, reply));
        calls.add(read);
        return reply;
    }

    /** A call whose reply nobody reads. */
    public void send(Redis.Call call) {
        add(new Request<>(List.of(call), replies -> null));
    }

    public boolean isEmpty() {
        return calls.isEmpty();
    }

    /**
     * Sends every call in one round trip, then decodes each request's replies.
     *
     * @throws RedisUnavailableException Redis unreachable or unable to serve now
     * @throws RuntimeException a script failed or a reply did not decode: a bug, not an outage
     */
    public void run(Redis redis) {
        List<Object> replies = redis.run(calls);
        int from = 0;
        for (Entry<?> entry : entries) {
            int to = from + entry.size();
            entry.decode(replies.subList(from, to));
            from = to;
        }
    }
}
