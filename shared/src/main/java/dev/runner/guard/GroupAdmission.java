package dev.runner.guard;

import java.util.List;

/**
 * Decisions for one group, in the order of {@code request.items()}.
 *
 * @param failOpen     null when Redis decided; else why Redis could not and everything was
 *                     admitted (the fail-open policy): the caller enforces what only it can, such
 *                     as pauses from Postgres
 * @param breakerClean the breaker was closed with no failure counted: reporting successes alone
 *                     would change nothing, so the caller may skip that report
 */
public record GroupAdmission(GroupRequest request, List<Admission> decisions, FailOpen failOpen, boolean breakerClean) {

    public GroupAdmission(GroupRequest request, List<Admission> decisions) {
        this(request, decisions, null, false);
    }

    public GroupAdmission {
        decisions = List.copyOf(decisions);
        if (decisions.size() != request.items().size()) {
            throw new IllegalArgumentException(
                    "decisions " + decisions.size() + " != items " + request.items().size());
        }
    }

    /** Everything was admitted because Redis could not decide. */
    public boolean failedOpen() {
        return failOpen != null;
    }
}
