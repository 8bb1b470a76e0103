package dev.runner.dlq;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;
import dev.runner.store.Database;

import java.util.List;
import java.util.Map;

/** Messages Runner could not read or accept, kept with the reason: nothing is dropped. */
public final class DeadLetterStore {

    /** @param source the queue (or input) it came from */
    public record DeadLetter(String source, String reason, String body, Map<String, String> attributes) {}

    private final Database db;

    public DeadLetterStore(Database db) {
        this.db = db;
    }

    /** All of them in one statement. */
    public void keep(List<DeadLetter> letters) {
        if (letters.isEmpty()) {
            return;
        }
        String[] sources = letters.stream().map(l -> storable(l.source())).toArray(String[]::new);
        String[] reasons = letters.stream().map(l -> storable(l.reason())).toArray(String[]::new);
        String[] bodies = letters.stream().map(l -> l.body() == null ? "" : storable(l.body())).toArray(String[]::new);
        String[] attributes = letters.stream().map(l -> {
            ObjectNode node = Json.object();
            l.attributes().forEach((name, value) -> node.put(storable(name), storable(value)));
            return Json.write(node);
        }).toArray(String[]::new);
        db.update("""
                insert into dead_letters (source, reason, body, attributes)
                select v.source, v.reason, v.body, v.attributes::jsonb
                from unnest(?::text[], ?::text[], ?::text[], ?::text[]) as v(source, reason, body, attributes)
                """, Database.array("text", sources), Database.array("text", reasons), Database.array("text", bodies),
                Database.array("text", attributes));
    }

    /**
     * Postgres text cannot hold NUL: one in a kept body (or in a reason quoting it) would fail the whole statement and
     * every letter with it, so it is kept as U+FFFD. Found by the ingest fuzz suite.
     */
    private static String storable(String text) {
        return text == null ? null : text.replace('\u0000', '\uFFFD');
    }

    public record Kept(long id, String source, String reason, String body) {}

    public List<Kept> recent(int limit) {
        return db.query("select id, source, reason, body from dead_letters order by id desc limit ?",
                row -> new Kept(row.getLong(1), row.getString(2), row.getString(3), row.getString(4)), limit);
    }
}
