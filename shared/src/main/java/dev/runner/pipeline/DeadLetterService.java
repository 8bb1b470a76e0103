package dev.runner.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.config.RunnerConfig;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemMessage;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.metrics.Metrics;
import dev.runner.queue.QueueMessage;
import dev.runner.run.RunJob;
import dev.runner.run.RunStore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Consumes the DLQs. An item there is dead: stamp dlq_at and status dead, keep its last error,
 * complete its run if it was the last open item. A run there could not fetch: it fails. Anything
 * else (an ingest envelope that kept failing, a body nobody can read) is kept in dead_letters.
 * The item worker sends final failures here itself; the queues' maxReceiveCount redrive is the
 * safety net for crashes and poison messages, which arrive without an error. A dead letter kills only
 * an item it is the end of (ItemStore.markDead): a copy that comes late, after the item was redriven,
 * leaves it alone, and one for an item whose call is still under way is looked at again later.
 *
 * <p>A worker sends an item to the DLQ before it records the hand-off, so that a record that fails loses nothing; its
 * dead letter can then overtake the record and find the item still in its call. Such items are looked at again after
 * short pauses ({@link #HANDOFF_PAUSES}, a second and a half in all), by which the record has landed, rather than
 * after the DLQ's visibility timeout (minutes), which would hold back their dlq_at and their run's end as long.
 */
public final class DeadLetterService {

    private static final Log LOG = Log.of(DeadLetterService.class);

    /** The pauses before looking again at items a dead letter found still in their call. */
    static final List<Duration> HANDOFF_PAUSES = List.of(Duration.ofMillis(50), Duration.ofMillis(150), Duration.ofMillis(400),
            Duration.ofMillis(900));

    /** How the service waits between looks (a sleep; tests do there what lands meanwhile). */
    @FunctionalInterface
    public interface Pause {
        Pause SLEEP = duration -> Thread.sleep(duration);

        void pause(Duration duration) throws InterruptedException;
    }

    private final RunnerConfig config;
    private final ItemStore items;
    private final RunStore runs;
    private final DeadLetterStore deadLetters;
    private final Metrics metrics;
    private final Pause pause;

    public DeadLetterService(RunnerConfig config, ItemStore items, RunStore runs, DeadLetterStore deadLetters, Metrics metrics,
                             Pause pause) {
        this.config = config;
        this.items = items;
        this.runs = runs;
        this.deadLetters = deadLetters;
        this.metrics = metrics;
        this.pause = pause;
    }

    /** Records what the DLQs gave up on; returns the ids of the messages to be delivered again later (items still in a call). */
    public List<String> process(List<QueueMessage> messages) {
        RunnerConfig.Queues queues = config.queues();
        List<ItemStore.Dead> dead = new ArrayList<>();
        Map<UUID, List<String>> messagesOfItem = new HashMap<>();
        List<DeadLetterStore.DeadLetter> kept = new ArrayList<>();
        Set<String> tenants = new LinkedHashSet<>();
        for (QueueMessage message : messages) {
            String source = message.sourceQueue();
            try {
                JsonNode body = Json.parse(message.body());
                if (isQueue(source, queues.itemsDlq())) {
                    // One item with its error (the worker's hand-off), or a pack the queue gave up on: each of its items is judged on its own.
                    String error = Json.optionalText(body, "error");
                    if (error == null) {
                        error = message.attributes().get("error");
                    }
                    for (ItemJob job : ItemMessage.read(body)) {
                        dead.add(new ItemStore.Dead(job.itemId(), error));
                        messagesOfItem.computeIfAbsent(job.itemId(), id -> new ArrayList<>()).add(message.messageId());
                        tenants.add(job.tenantId());
                    }
                } else if (isQueue(source, queues.runsDlq())) {
                    RunJob job = RunJob.fromJson(body);
                    runs.fail(job.runId(), "fetch kept failing; gave up after " + message.receiveCount() + " deliveries");
                    LOG.warn("run failed", "runId", job.runId(), "why", "runs DLQ");
                } else {
                    kept.add(new DeadLetterStore.DeadLetter(source, "delivery kept failing (" + source + ")", message.body(),
                            Map.of("messageId", message.messageId())));
                }
            } catch (Json.InvalidJsonException e) {
                kept.add(new DeadLetterStore.DeadLetter(source, "unreadable: " + e.getMessage(), message.body(),
                        Map.of("messageId", message.messageId())));
            }
        }
        ItemStore.Marked marked = markDead(dead);
        List<UUID> runsOfDead = marked.runsOfDead();
        if (!runsOfDead.isEmpty()) {
            metrics.itemsDead(runsOfDead.size(), tenants);
        }
        runs.completeIfDone(Set.copyOf(runsOfDead));
        deadLetters.keep(kept);
        if (!dead.isEmpty() || !kept.isEmpty()) {
            LOG.warn("dead letters", "items", dead.size(), "markedDead", runsOfDead.size(), "inFlight", marked.inFlight().size(),
                    "backToWork", marked.backToWork(), "kept", kept.size());
        }
        return marked.inFlight().stream().flatMap(id -> messagesOfItem.get(id).stream()).distinct().toList();
    }

    /** Marks what the dead letters end, looking again after each pause at the items still in their call; what they all did. */
    private ItemStore.Marked markDead(List<ItemStore.Dead> dead) {
        ItemStore.Marked marked = items.markDead(dead, config.itemClaimLease(), config.retry().maxAttempts());
        List<UUID> runsOfDead = new ArrayList<>(marked.runsOfDead());
        int backToWork = marked.backToWork();
        for (Duration wait : HANDOFF_PAUSES) {
            if (marked.inFlight().isEmpty()) {
                break;
            }
            try {
                pause.pause(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            Set<UUID> inFlight = marked.inFlight();
            marked = items.markDead(dead.stream().filter(d -> inFlight.contains(d.itemId())).toList(), config.itemClaimLease(),
                    config.retry().maxAttempts());
            runsOfDead.addAll(marked.runsOfDead());
            backToWork += marked.backToWork();
        }
        return new ItemStore.Marked(runsOfDead, marked.inFlight(), backToWork);
    }

    private static boolean isQueue(String name, String url) {
        return name != null && url != null && url.endsWith("/" + name);
    }
}
