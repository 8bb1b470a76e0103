package dev.runner.guard;

import java.util.List;

/**
 * Decisions for one group, in the order of {@code request.items()}.
 *
 * @param failedOpen Redis could not be asked and everything was admitted (the fail-open policy):
 *                   the caller enforces what only it can, such as pauses from Postgres
 */
public record GroupAdmission(GroupRequest request, List<Admission> decisions, boolean failedOpen) {

    public GroupAdmission(GroupRequest request, List<Admission> decisions) {
        this(request, decisions, false);
    }

    public GroupAdmission {
        decisions = List.copyOf(decisions);
        if (decisions.size() != request.items().size()) {
            throw new IllegalArgumentException(
                    "decisions " + decisions.size() + " != items " + request.items().size());
        }
    }
}
