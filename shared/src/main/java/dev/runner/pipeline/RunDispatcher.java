package dev.runner.pipeline;

import dev.runner.config.RunnerConfig;
import dev.runner.json.Json;
import dev.runner.outbox.OutboxStore;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import dev.runner.run.RunJob;
import dev.runner.store.Database;
import dev.runner.trigger.Trigger;

import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * The one way RunJobs of stored runs enter the runs tiers (manual and scheduled runs, the sweep's
 * re-sends): each to the tier of its trigger. Producers that store runs and then send use
 * {@link #commitThenSend}, so a RunJob lost after the commit is sent by the sweep.
 */
public final class RunDispatcher {

    private final RunnerConfig.Queues queues;
    private final QueueClient client;
    private final OwedSends<RunJob> owed;

    public RunDispatcher(RunnerConfig.Queues queues, QueueClient client, Database db, OutboxStore outbox) {
        this.queues = queues;
        this.client = client;
        this.owed = new OwedSends<>(db, outbox, OutboxStore.Kind.RUNS, RunJob::runId, this::dispatch);
    }

    /**
     * Runs {@code work} in one transaction with the record that the RunJobs {@code jobsOf} names are
     * owed their messages, then sends them and settles the record ({@link OwedSends#commitThenSend}):
     * once committed the runs are accepted whatever the send does.
     */
    public <T> T commitThenSend(Database.TransactionWork<T> work, Function<T, List<RunJob>> jobsOf) {
        return owed.commitThenSend(work, jobsOf);
    }

    /** Sends RunJobs whose messages are owed, then settles {@code owed}; false (logged) when the send failed and they stay owed. */
    boolean sendOwed(List<RunJob> jobs, List<OutboxStore.Owed> owed) {
        return this.owed.sendOwed(jobs, owed);
    }

    /** The runs tiers whose queue shows no visible message now. */
    Set<Trigger> quietTiers() {
        return client.quiet(queues.runs());
    }

    /** Sends RunJobs to their tiers. */
    public void dispatch(List<RunJob> jobs) {
        for (Trigger trigger : List.of(Trigger.MANUAL, Trigger.SCHEDULE)) {
            List<OutgoingMessage> messages = jobs.stream().filter(job -> job.trigger() == trigger)
                    .map(job -> OutgoingMessage.of(Json.write(job.toJson()), job.tenantId())).toList();
            client.sendAll(queues.runs(trigger), messages);
        }
    }
}
