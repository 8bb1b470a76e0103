package dev.runner.redis;

import dev.runner.cost.CostTracker;
import io.lettuce.core.Range;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;

import java.util.ArrayList;
import java.util.List;

/**
 * Runs script calls and plain reads pipelined, one round trip for all. Scripts run with EVALSHA
 * and, for those Redis answers NOSCRIPT (e.g. after a failover), again with EVAL, which also
 * caches them: a second round trip for those only.
 */
final class ScriptRunner {

    /** Marks a reply of EVALSHA that Redis answered with NOSCRIPT. */
    private static final Object NO_SCRIPT = new Object();

    private final RedisConnection connection;
    private final CostTracker costs;

    ScriptRunner(RedisConnection connection, CostTracker costs) {
        this.connection = connection;
        this.costs = costs;
    }

    /** The replies, in the commands' order. */
    List<Object> run(List<? extends Redis.Command> commands) {
        if (commands.isEmpty()) {
            return List.of();
        }
        List<Object> replies = new ArrayList<>(dispatch(commands, false));
        List<Integer> unknown = new ArrayList<>();
        for (int i = 0; i < replies.size(); i++) {
            if (replies.get(i) == NO_SCRIPT) {
                unknown.add(i);
            }
        }
        if (!unknown.isEmpty()) {
            List<Object> reloaded = dispatch(unknown.stream().<Redis.Command>map(commands::get).toList(), true);
            for (int i = 0; i < unknown.size(); i++) {
                replies.set(unknown.get(i), reloaded.get(i));
            }
        }
        return replies;
    }

    private static List<Double> scores(Object reply) {
        return ((List<?>) reply).stream().map(value -> ((io.lettuce.core.ScoredValue<?>) value).getScore()).toList();
    }

    /** One round trip; {@code sendBody}: EVAL instead of EVALSHA. */
    private List<Object> dispatch(List<? extends Redis.Command> calls, boolean sendBody) {
        costs.redisRoundTrip(calls.size());
        List<RedisFuture<?>> futures = connection.pipelined(commands -> {
            List<RedisFuture<?>> sent = new ArrayList<>(calls.size());
            for (Redis.Command command : calls) {
                sent.add(switch (command) {
                    case Redis.Call call -> sendBody
                            ? commands.eval(call.script().body(), ScriptOutputType.MULTI, keys(call), args(call))
                            : commands.evalsha(call.script().sha(), ScriptOutputType.MULTI, keys(call), args(call));
                    case Redis.Read.Hash hash -> commands.hgetall(hash.key());
                    case Redis.Read.Count count -> commands.zcount(count.key(), Range.from(Range.Boundary.excluding((double) count.above()),
                            count.upTo() == null ? Range.Boundary.unbounded() : Range.Boundary.including((double) count.upTo())));
                    case Redis.Read.Scores scores -> commands.zrangeWithScores(scores.key(), 0, -1);
                    case Redis.Read.Highest highest -> commands.zrangeWithScores(highest.key(), -1, -1);
                });
            }
            return sent;
        });
        List<Object> replies = new ArrayList<>(futures.size());
        for (int i = 0; i < futures.size(); i++) {
            try {
                Object reply = connection.await(futures.get(i));
                replies.add(switch (calls.get(i)) {
                    case Redis.Read.Scores scores -> scores(reply);
                    case Redis.Read.Highest highest -> scores(reply).stream().findFirst().orElse(null);
                    default -> reply;
                });
            } catch (RedisNoScriptException e) {
                replies.add(NO_SCRIPT);
            } catch (RedisCommandExecutionException e) {
                if (calls.get(i) instanceof Redis.Call call) {
                    throw new RedisScriptException(call.script(), e);
                }
                throw e;
            }
        }
        return replies;
    }

    private static String[] keys(Redis.Call call) {
        return call.keys().toArray(String[]::new);
    }

    private static String[] args(Redis.Call call) {
        return call.args().toArray(String[]::new);
    }
}
