package dev.runner.run;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;

/** A run a completion ended: what its duration metric needs, from the statement's own RETURNING. */
public record CompletedRun(UUID runId, String tenantId, Duration duration) {

    /** From the columns run_id, tenant_id, created_at, finished_at. */
    public static CompletedRun of(ResultSet row) throws SQLException {
        return new CompletedRun(row.getObject(1, UUID.class), row.getString(2),
                Duration.between(row.getTimestamp(3).toInstant(), row.getTimestamp(4).toInstant()));
    }
}
