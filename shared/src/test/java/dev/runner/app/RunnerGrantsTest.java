package dev.runner.app;

import dev.runner.config.QueueRole;
import dev.runner.config.RunnerConfig;
import dev.runner.config.SecretRole;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A root bound to a function's grants refuses the rest before any request is made (so no server is needed). */
class RunnerGrantsTest {

    private static Map<String, String> environment() {
        Map<String, String> env = new HashMap<>();
        env.put("RUNNER_DATABASE_URL", "jdbc:postgresql://127.0.0.1:1/none");
        env.put("RUNNER_REDIS_URL", "redis://127.0.0.1:1");
        env.put("RUNNER_SQS_ENDPOINT", "http://127.0.0.1:1");
        env.put("RUNNER_DATABASE_SECRET", "runner/database");
        env.put("RUNNER_API_KEY_SECRET", "runner/api-key");
        for (QueueRole role : QueueRole.values()) {
            env.put(role.variable(), "http://127.0.0.1:1/000000000000/runner-" + role.name().toLowerCase().replace('_', '-'));
        }
        return env;
    }

    @Test
    void aFunctionMaySendOnlyToTheQueuesItDeclares() {
        RunnerConfig config = RunnerConfig.from(environment());
        try (Runner runner = new Runner(config, Clock.systemUTC()).serve(Grants.none().sendingTo(QueueRole.ITEMS_WEBHOOK))) {
            List<OutgoingMessage> one = List.of(OutgoingMessage.of("{}", "t"));
            var refused = assertThrows(QueueClient.NotGranted.class,
                    () -> runner.queues().sendAll(config.queues().url(QueueRole.ITEMS_MANUAL), one));
            assertEquals("this function is not granted send on http://127.0.0.1:1/000000000000/runner-items-manual;"
                    + " declare it in the function's grants and template.yaml's policies", refused.getMessage());
            assertThrows(QueueClient.NotGranted.class, () -> runner.queues().changeVisibility(config.queues().url(QueueRole.ITEMS_WEBHOOK),
                    List.of(new QueueClient.VisibilityChange("receipt", 5))));
            runner.queues().sendAll(config.queues().url(QueueRole.ITEMS_MANUAL), List.of());
        }
    }

    @Test
    void aFunctionMayReadOnlyTheSecretsItDeclares() {
        try (Runner runner = new Runner(RunnerConfig.from(environment()), Clock.systemUTC()).serve(Grants.none().reading(SecretRole.DATABASE))) {
            var refused = assertThrows(IllegalStateException.class, () -> runner.secret(SecretRole.API_KEY));
            assertEquals("this function is not granted the API_KEY secret; declare it in its grants and template.yaml's policies",
                    refused.getMessage());
            assertEquals("runner/database", runner.secret(SecretRole.DATABASE).id());
        }
    }

    @Test
    void theGlobalSigningKeyIsOptionalBecauseHandlersMayHaveKeysOfTheirOwn() {
        Map<String, String> env = environment();
        // Without it, a handler with no key of its own is not called (HandlerSigningIT); the others are signed as ever.
        try (Runner runner = new Runner(RunnerConfig.from(env), Clock.systemUTC())) {
            runner.handlers();
        }
        env.put("RUNNER_HANDLER_SIGNING_SECRET", "the-key");
        try (Runner runner = new Runner(RunnerConfig.from(env), Clock.systemUTC())) {
            runner.handlers();
        }
    }

    @Test
    void functionsSharingARootMayDoWhatAnyOfThemMay() {
        RunnerConfig config = RunnerConfig.from(environment());
        try (Runner runner = new Runner(config, Clock.systemUTC())
                .serve(Grants.none().sendingTo(QueueRole.ITEMS_WEBHOOK))
                .serve(Grants.none().reading(SecretRole.API_KEY))) {
            assertEquals("runner/api-key", runner.secret(SecretRole.API_KEY).id());
            assertThrows(QueueClient.NotGranted.class,
                    () -> runner.queues().sendAll(config.queues().url(QueueRole.RUNS_MANUAL), List.of(OutgoingMessage.of("{}", "t"))));
        }
    }
}
