package dev.runner.pipeline;

import dev.runner.guard.Candidate;
import dev.runner.guard.GroupAdmission;
import dev.runner.guard.GroupReport;
import dev.runner.guard.Guard;
import dev.runner.integration.HandlerRef;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * What a batch tells the guard after its calls, decided without I/O. The breaker hears one outcome
 * per handler call (a failed /process-batch is one failure, not ten: it is one look at the
 * endpoint), and every lease admission granted and not yet given back goes back.
 */
final class CallReport {

    private CallReport() {}

    static List<GroupReport> of(Admitted admitted, List<CallResult> results) {
        Map<HandlerRef, List<GroupReport.Call>> observedByGroup = new LinkedHashMap<>();
        admitted.byGroup().keySet().forEach(group -> observedByGroup.put(group, new ArrayList<>()));
        for (CallResult result : results) {
            GroupReport.Observed observed = result.observed();
            if (observed == null) {
                continue;
            }
            List<String> itemIds = result.outcomes().keySet().stream().map(UUID::toString).toList();
            GroupAdmission admission = admitted.byGroup().get(result.group());
            observedByGroup.computeIfAbsent(result.group(), g -> new ArrayList<>()).add(new GroupReport.Call(itemIds, observed,
                    admission == null ? List.of() : admission.tenantsOf(Set.copyOf(itemIds)), result.retryAfterMs()));
        }
        List<GroupReport> reports = new ArrayList<>();
        observedByGroup.forEach((group, groupCalls) -> {
            GroupAdmission admission = admitted.byGroup().get(group);
            // Steady state: successes on a clean breaker with no adaptive scope are not told (with leases to
            // give back, the report only gives them back, and need not read the breaker), and with no lease
            // they need no round trip at all. (Failures another worker counts meanwhile are then not reset by
            // these successes: the breaker may open one success earlier, the safe side.)
            List<String> leases = admission == null ? List.of() : admitted.leasesHeld(admission);
            boolean successesChangeNothing = admission != null && admission.breakerClean()
                    && groupCalls.stream().allMatch(call -> call.observed() == GroupReport.Observed.ANSWERED);
            if (successesChangeNothing && leases.isEmpty()) {
                return;
            }
            // Only items that may hold a probe (the breaker was not clean) or an urgent marker need naming.
            List<String> admittedIds = admission == null ? List.of() : admission.request().items().stream()
                    .filter(c -> !admission.breakerClean() || c.priority() <= Guard.URGENT_PRIORITY)
                    .map(Candidate::itemId).filter(id -> admitted.itemIds().contains(UUID.fromString(id))).toList();
            reports.add(new GroupReport(group.integrationKey(), group.handlerKey(), successesChangeNothing ? List.of() : groupCalls,
                    leases, admittedIds, admission == null ? null : admission.request().limits(),
                    admission == null ? 0 : admission.admittedAtMs(), admission != null && admission.adapted()));
        });
        return reports;
    }
}
