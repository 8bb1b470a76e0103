package dev.runner.guard;

import java.util.List;

/** Decisions for one group, in the order of {@code request.items()}. */
public record GroupAdmission(GroupRequest request, List<Admission> decisions) {

    public GroupAdmission {
        decisions = List.copyOf(decisions);
        if (decisions.size() != request.items().size()) {
            throw new IllegalArgumentException(
                    "decisions " + decisions.size() + " != items " + request.items().size());
        }
    }
}
