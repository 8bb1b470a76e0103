package dev.runner.run;

import dev.runner.integration.Direction;
import dev.runner.trigger.Trigger;

import java.time.Instant;
import java.util.UUID;

/** A run as stored. */
public record Run(UUID runId, String tenantId, String integrationKey, String handlerKey, Direction direction,
                  Trigger trigger, RunStatus status, String error, Instant createdAt, Instant finishedAt) {

    public RunJob job() {
        return new RunJob(runId, tenantId, integrationKey, handlerKey, direction, trigger, null);
    }
}
