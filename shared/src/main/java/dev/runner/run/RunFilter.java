package dev.runner.run;

import dev.runner.trigger.Trigger;

/** Which runs a list shows; each null field matches every run. */
public record RunFilter(String tenantId, String integrationKey, String handlerKey, Trigger trigger, RunStatus status) {

    public static final RunFilter ALL = new RunFilter(null, null, null, null, null);
}
