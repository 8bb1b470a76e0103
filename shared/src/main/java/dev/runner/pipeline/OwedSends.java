package dev.runner.pipeline;

import dev.runner.log.Log;
import dev.runner.outbox.OutboxStore;
import dev.runner.queue.QueueClient;
import dev.runner.store.Database;

import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Commit, then send (the outbox, OutboxStore): rows and the record of the messages they owe are
 * committed together, the messages sent after the commit, the record settled once they are. One
 * shape for both kinds of message, items ({@link ItemDispatcher}) and RunJobs ({@link RunDispatcher}).
 */
final class OwedSends<J> {

    private static final Log LOG = Log.of(OwedSends.class);

    private final Database db;
    private final OutboxStore outbox;
    private final OutboxStore.Kind kind;
    private final Function<J, UUID> idOf;
    private final Consumer<List<J>> send;

    OwedSends(Database db, OutboxStore outbox, OutboxStore.Kind kind, Function<J, UUID> idOf, Consumer<List<J>> send) {
        this.db = db;
        this.outbox = outbox;
        this.kind = kind;
        this.idOf = idOf;
        this.send = send;
    }

    /**
     * Runs {@code work} in one transaction with the record that the jobs {@code jobsOf} names are
     * owed their messages, then sends them and settles the record. A send that fails is logged, not
     * thrown: the rows and the record are committed, the sweep sends them (RUNNER_SWEEP_UNSENT_S),
     * so the caller answers as accepted, never with a failure its client would retry. Only a send
     * the function is not granted ({@link QueueClient.NotGranted}) is thrown, after the commit.
     */
    <T> T commitThenSend(Database.TransactionWork<T> work, Function<T, List<J>> jobsOf) {
        record Committed<T, J>(T result, List<J> jobs, OutboxStore.Owed owed) {}
        Committed<T, J> committed = db.inTransaction(connection -> {
            T result = work.run(connection);
            List<J> jobs = jobsOf.apply(result);
            return new Committed<>(result, jobs, outbox.owe(connection, kind, jobs.stream().map(idOf).toList()));
        });
        sendOwed(committed.jobs(), List.of(committed.owed()));
        return committed.result();
    }

    /**
     * Sends jobs whose messages are owed, then settles {@code owed}; false (logged) when the send failed and they stay
     * owed. A send this function is not granted is thrown: a deployment bug must show, not wait on the sweep.
     */
    boolean sendOwed(List<J> jobs, List<OutboxStore.Owed> owed) {
        try {
            send.accept(jobs);
        } catch (QueueClient.NotGranted e) {
            throw e;
        } catch (RuntimeException e) {
            switch (kind) {
                case ITEMS -> LOG.warn("send after commit failed; the sweep sends these items", "items", jobs.size(), "error", e);
                case RUNS -> LOG.warn("RunJob send after commit failed; the sweep sends it", "runs", jobs.size(), "error", e);
            }
            return false;
        }
        try {
            // A settle that fails leaves the record: the sweep then sends a copy of a live message, which the claim lets through once.
            outbox.settle(owed);
        } catch (RuntimeException e) {
            LOG.warn("sent, but not settled; the sweep will send a copy", "error", e);
        }
        return true;
    }
}
