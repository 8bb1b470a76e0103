package dev.runner.pipeline;

import dev.runner.guard.Admission;
import dev.runner.guard.Candidate;
import dev.runner.guard.ConcurrencyAndRate;
import dev.runner.guard.GroupAdmission;
import dev.runner.guard.GroupReport;
import dev.runner.guard.GroupRequest;
import dev.runner.handler.Outcome;
import dev.runner.integration.HandlerRef;
import dev.runner.pipeline.CallResult.Observation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a batch tells the guard after its calls: no Redis. */
class CallReportTest {

    private static final HandlerRef LEADS = new HandlerRef("crm", "leads");
    private final UUID webhookItem = UUID.randomUUID();
    private final UUID manualItem = UUID.randomUUID();

    @Test
    void successesOnACleanBreakerWithoutLeasesNeedNoReport() {
        Admitted admitted = admitted(true, List.of());

        assertTrue(CallReport.of(admitted, List.of(up())).isEmpty(), "no round trip at all");
    }

    @Test
    void successesOnACleanBreakerOnlyGiveTheLeasesBackThatLanesDidNotReleaseEarly() {
        Admitted admitted = admitted(true, List.of("lease-1", "lease-2"));
        admitted.leasesReleased().add("lease-1");

        List<GroupReport> reports = CallReport.of(admitted, List.of(up()));

        assertEquals(1, reports.size());
        GroupReport report = reports.getFirst();
        assertTrue(report.calls().isEmpty(), "successes change nothing on a clean breaker");
        assertEquals(List.of("lease-2"), report.leaseTokens());
        assertEquals(List.of(webhookItem.toString()), report.admittedItemIds(), "only the urgent item's marker ends");
    }

    @Test
    void onABreakerNotCleanEachCallCountsOnceWithItsTenantsAndEveryAdmittedItemIsNamed() {
        Admitted admitted = admitted(false, List.of());
        CallResult down = new CallResult(LEADS, Map.of(webhookItem, new Outcome.Failed("503", true),
                manualItem, new Outcome.Failed("503", true)), Observation.DOWN);
        CallResult unknown = new CallResult(LEADS, Map.of(manualItem, new Outcome.Failed("unknown handler", false)), Observation.NONE);

        List<GroupReport> reports = CallReport.of(admitted, List.of(down, unknown));

        GroupReport report = reports.getFirst();
        assertEquals(1, report.calls().size(), "a batch call is one look at the endpoint; a call that saw nothing is not told");
        GroupReport.Call call = report.calls().getFirst();
        assertEquals(false, call.up());
        assertEquals(Set.of(webhookItem.toString(), manualItem.toString()), Set.copyOf(call.itemIds()));
        assertEquals(List.of("t-1", "t-2"), call.tenantIds());
        assertEquals(List.of(webhookItem.toString(), manualItem.toString()), report.admittedItemIds(), "either may hold a probe");
    }

    private CallResult up() {
        return new CallResult(LEADS, Map.of(webhookItem, new Outcome.Succeeded(), manualItem, new Outcome.Succeeded()), Observation.UP);
    }

    /** Both items admitted, the webhook one urgent (priority 1), the manual one not. */
    private Admitted admitted(boolean breakerClean, List<String> leases) {
        GroupRequest request = new GroupRequest("crm", "leads", new ConcurrencyAndRate(leases.size(), 0), List.of(
                new Candidate(webhookItem.toString(), "t-1", 1), new Candidate(manualItem.toString(), "t-2", 3)),
                1, Duration.ofMillis(50), Duration.ofMinutes(1));
        GroupAdmission admission = new GroupAdmission(request, List.of(new Admission.Admitted(webhookItem.toString()),
                new Admission.Admitted(manualItem.toString())), null, breakerClean, leases, 0);
        return new Admitted(Set.of(webhookItem, manualItem), Map.of(LEADS, admission), Map.of());
    }
}
