package dev.runner.app;

import dev.runner.config.RunnerConfig;
import dev.runner.queue.QueueClient;
import dev.runner.config.QueueRole;
import dev.runner.config.SecretRole;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * What a function's code may reach beyond Postgres and Redis: the queues it sends to, the queues
 * whose received messages it sets a new visibility on (retry backoff), and the secrets it reads.
 * Each function's entry point declares its own; the {@link Runner} it binds to refuses anything
 * else, and template.yaml's policies grant exactly this, no more (a test compares them). So a
 * send that AWS would refuse fails in every test, not first in production.
 */
public record Grants(Set<QueueRole> sends, Set<QueueRole> changesVisibility, Set<QueueRole> readsAttributes, Set<SecretRole> reads) {

    public Grants {
        sends = frozen(sends, QueueRole.class);
        changesVisibility = frozen(changesVisibility, QueueRole.class);
        readsAttributes = frozen(readsAttributes, QueueRole.class);
        reads = frozen(reads, SecretRole.class);
    }

    /** Nothing: the start of a declaration. */
    public static Grants none() {
        return new Grants(Set.of(), Set.of(), Set.of(), Set.of());
    }

    public Grants sendingTo(QueueRole... roles) {
        return new Grants(with(sends, QueueRole.class, roles), changesVisibility, readsAttributes, reads);
    }

    public Grants changingVisibilityOn(QueueRole... roles) {
        return new Grants(sends, with(changesVisibility, QueueRole.class, roles), readsAttributes, reads);
    }

    /** Queue depths (GetQueueAttributes): the sweep's backlog check, the operator's queue view. */
    public Grants readingAttributesOf(QueueRole... roles) {
        return new Grants(sends, changesVisibility, with(readsAttributes, QueueRole.class, roles), reads);
    }

    public Grants reading(SecretRole... roles) {
        return new Grants(sends, changesVisibility, readsAttributes, with(reads, SecretRole.class, roles));
    }

    /** What two functions sharing one root may do together. */
    public Grants and(Grants other) {
        return new Grants(with(sends, QueueRole.class, other.sends.toArray(QueueRole[]::new)),
                with(changesVisibility, QueueRole.class, other.changesVisibility.toArray(QueueRole[]::new)),
                with(readsAttributes, QueueRole.class, other.readsAttributes.toArray(QueueRole[]::new)),
                with(reads, SecretRole.class, other.reads.toArray(SecretRole[]::new)));
    }

    /** Whether these grants let a function {@code use} the queue at {@code queueUrl}, among {@code queues}. */
    public boolean allows(QueueClient.Use use, String queueUrl, RunnerConfig.Queues queues) {
        Set<QueueRole> granted = switch (use) {
            case SEND -> sends;
            case CHANGE_VISIBILITY -> changesVisibility;
            case READ_ATTRIBUTES -> readsAttributes;
        };
        return granted.stream().anyMatch(role -> queues.url(role).equals(queueUrl));
    }

    @SafeVarargs
    private static <E extends Enum<E>> Set<E> with(Set<E> set, Class<E> type, E... more) {
        EnumSet<E> copy = EnumSet.noneOf(type);
        copy.addAll(set);
        Collections.addAll(copy, more);
        return copy;
    }

    private static <E extends Enum<E>> Set<E> frozen(Set<E> set, Class<E> type) {
        EnumSet<E> copy = EnumSet.noneOf(type);
        copy.addAll(set);
        return Collections.unmodifiableSet(copy);
    }
}
