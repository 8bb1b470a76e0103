package dev.runner.run;

import dev.runner.integration.Direction;
import dev.runner.trigger.Trigger;

import java.util.UUID;

/** What an item needs to know of its run: who it belongs to and which tier it travels on. */
public record RunRef(UUID runId, String tenantId, String integrationKey, String handlerKey, Direction direction, Trigger trigger) {}
