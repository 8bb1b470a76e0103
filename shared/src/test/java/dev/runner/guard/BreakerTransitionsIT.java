package dev.runner.guard;

import dev.runner.redis.RedisTargets;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static dev.runner.guard.GuardFixture.admittedIds;
import static dev.runner.guard.GuardFixture.group;
import static dev.runner.guard.GuardFixture.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link BreakerState#TRANSITIONS} held against the real scripts (real Redis, single and cluster):
 * a seeded random walk of admissions, answers to admitted calls (probes or not), failures of
 * calls nobody admitted, and clock moves. Every change of state the scripts make must be listed,
 * and every listed change must happen.
 */
class BreakerTransitionsIT {

    private static final String CRM = "crm-x";
    private static final long SEED = 20_240_612L;
    private static final int STEPS = 600;

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void theScriptsMakeOnlyTheListedTransitionsAndAllOfThem(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var random = new Random(SEED);
        List<String> inFlight = new ArrayList<>();
        Map<String, Integer> seen = new TreeMap<>();
        BreakerState state = BreakerState.CLOSED;
        int nextItem = 0;
        for (int step = 0; step < STEPS; step++) {
            String did;
            int op = random.nextInt(10);
            if (op < 3) {
                int count = 1 + random.nextInt(3);
                List<Candidate> candidates = items("i" + nextItem, "acme", Trigger.WEBHOOK, count);
                nextItem++;
                inFlight.addAll(admittedIds(f.admitOne(group(CRM, "sync", ConcurrencyAndRate.UNLIMITED, candidates))));
                did = "admit " + count;
            } else if (op < 7 && !inFlight.isEmpty()) {
                String item = inFlight.remove(random.nextInt(inFlight.size()));
                boolean up = random.nextInt(10) < 6;
                f.guard.report(List.of(GuardFixture.calls(CRM, "sync", up, List.of(item))));
                did = "answer " + item + (up ? " up" : " down");
            } else if (op < 8) {
                int failures = 1 + random.nextInt(3);
                f.guard.report(List.of(GuardFixture.tally(CRM, "sync", 0, failures, List.of())));
                did = failures + " failures of unadmitted calls";
            } else {
                long millis = random.nextInt(20_000);
                f.clock.advance(Duration.ofMillis(millis));
                did = "advance " + millis + " ms";
            }

            BreakerSnapshot snapshot = f.guard.breaker(CRM);
            if (snapshot.state() != state) {
                assertTrue(state.canBecome(snapshot.state()),
                        "step " + step + " (" + did + "): " + state + " -> " + snapshot.state() + " is not a listed transition");
                seen.merge(state + " -> " + snapshot.state(), 1, Integer::sum);
            }
            if (snapshot.state() == BreakerState.HALF_OPEN) {
                assertTrue(snapshot.halfOpenSuccesses() < GuardFixture.BREAKER.halfOpenSuccesses(), "step " + step + ": " + snapshot);
            }
            state = snapshot.state();
        }
        System.out.println("BreakerTransitionsIT transitions seen in " + STEPS + " steps: " + seen);
        assertEquals(BreakerState.TRANSITIONS.stream().map(t -> t.from() + " -> " + t.to()).sorted().toList(),
                List.copyOf(seen.keySet()), "every listed transition happens");
    }
}
