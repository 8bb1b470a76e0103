package dev.runner.pipeline;

import dev.runner.config.RunnerConfig;
import dev.runner.guard.Guard;
import dev.runner.item.ItemJob;
import dev.runner.json.Json;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one way items enter the items tiers (fan-out, webhooks, ingest, redrive, resume): each is
 * sent to the tier of its run's trigger, delayed until its tenant's window has room for it. So a
 * tenant over its limit costs one send per item instead of a receive-and-re-send every few
 * seconds, and its backlog waits invisible rather than in front of other tenants' items.
 */
public final class ItemDispatcher {

    private final RunnerConfig.Queues queues;
    private final QueueClient client;
    private final Guard guard;

    public ItemDispatcher(RunnerConfig.Queues queues, QueueClient client, Guard guard) {
        this.queues = queues;
        this.client = client;
        this.guard = guard;
    }

    public void dispatch(List<ItemJob> jobs) {
        if (jobs.isEmpty()) {
            return;
        }
        Map<String, List<String>> byTenant = new LinkedHashMap<>();
        jobs.forEach(job -> byTenant.computeIfAbsent(job.tenantId(), t -> new ArrayList<>()).add(job.itemId().toString()));
        Map<String, Duration> delays = guard.reserveTenantSlots(byTenant);
        Map<String, List<OutgoingMessage>> byQueue = new LinkedHashMap<>();
        for (ItemJob job : jobs) {
            Duration delay = delays.getOrDefault(job.itemId().toString(), Duration.ZERO);
            int seconds = delay.isZero() ? 0 : Settlement.delaySeconds(delay);
            byQueue.computeIfAbsent(queues.items(job.trigger()), q -> new ArrayList<>())
                    .add(new OutgoingMessage(Json.write(job.toJson()), seconds, job.tenantId()));
        }
        byQueue.forEach(client::sendAll);
    }
}
