package dev.runner.delivery;

import dev.runner.cache.LookupCache;
import dev.runner.store.Database;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Producers of the ingest queue known by their SQS {@code SenderId} (an IAM user id, a role's
 * {@code AROA…:session}, an account id), and the tenants each may act for (ingest_producers). Reads go through an
 * in-process cache, misses included, so the ingest consumer asks Postgres at most once per TTL per sender; a change
 * made in this process is seen at once, one made elsewhere within the TTL.
 */
public final class IngestProducers {

    /** What SQS puts in SenderId: IAM ids, role session names, account ids. */
    public static final Pattern SENDER_ID = Pattern.compile("[A-Za-z0-9_+=,.@:-]{1,256}");
    /** Tenants one producer may act for; a producer for more should be bound by signatures instead. */
    public static final int MAX_TENANTS = 1000;
    /** Producers held in process. */
    private static final int MAX_CACHED = 10_000;
    /** Unknown sender ids held in process, apart from the producers: made-up ids evict only other made-up ones. */
    private static final int MAX_CACHED_UNKNOWN = 1_000;

    /** A producer and the tenants it may act for. */
    public record Producer(String senderId, List<String> tenants) {
        public Producer {
            tenants = List.copyOf(tenants);
        }
    }

    private final Database db;
    private final LookupCache<String, Producer> cache;

    public IngestProducers(Database db, Duration ttl, Clock clock) {
        this.db = db;
        this.cache = new LookupCache<>(ttl, MAX_CACHED, MAX_CACHED_UNKNOWN, clock);
    }

    /** Whether {@code senderId} may act for {@code tenantId}; through the cache. */
    public boolean mayActFor(String senderId, String tenantId) {
        if (senderId == null || !SENDER_ID.matcher(senderId).matches()) {
            return false;
        }
        return cache.get(senderId, this::find).map(p -> p.tenants().contains(tenantId)).orElse(false);
    }

    public Optional<Producer> find(String senderId) {
        return db.queryOne("select tenants from ingest_producers where sender_id = ?",
                row -> new Producer(senderId, List.of((String[]) row.getArray(1).getArray())), senderId);
    }

    /** Sets the tenants a producer may act for, replacing what it had. */
    public Producer put(Producer producer) {
        db.update("""
                insert into ingest_producers (sender_id, tenants) values (?, ?)
                on conflict (sender_id) do update set tenants = excluded.tenants, updated_at = now()
                """, producer.senderId(), Database.array("text", producer.tenants().toArray()));
        cache.invalidate(producer.senderId());
        return producer;
    }

    /** Unbinds a producer; false when it was not known. */
    public boolean delete(String senderId) {
        int deleted = db.update("delete from ingest_producers where sender_id = ?", senderId);
        cache.invalidate(senderId);
        return deleted > 0;
    }
}
