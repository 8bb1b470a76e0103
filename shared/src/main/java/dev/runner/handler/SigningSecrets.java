package dev.runner.handler;

import dev.runner.integration.HandlerRef;

import java.util.List;

/** The secrets Runner signs one handler's calls with, current first ({@link HandlerSigning}); empty when it has none. */
@FunctionalInterface
public interface SigningSecrets {

    List<String> of(HandlerRef handler);

    /** One key for every handler: tests and tools without Postgres. */
    static SigningSecrets fixed(String secret) {
        if (secret == null || secret.isBlank()) {
            throw new IllegalArgumentException("the handler signing secret is empty: handlers could not tell Runner's calls from anyone's");
        }
        List<String> secrets = List.of(secret);
        return handler -> secrets;
    }
}
