package dev.runner.store;

import org.postgresql.PGConnection;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * The database role each runtime function logs in as. {@code db/migration/R__runtime_roles.sql}
 * creates them (without a login) and grants each what its function's job needs; the owner, which
 * only Migrate uses, keeps the schema. A role's login secret is named {@link #secretName} under a
 * deployment's prefix, and Migrate gives the role its login from that secret ({@link #enableLogin}).
 */
public enum DatabaseRole {
    /** A delivery's lookups and inserts: milliseconds; API Gateway gives the whole request 30 s. */
    WEBHOOK("runner_webhook", Duration.ofSeconds(5)),
    /** Lists and counts read from indexes, bulk actions a page at a time; the console and GET /queues read the most. */
    API("runner_api", Duration.ofSeconds(10)),
    /** A page of items stored per statement. */
    RUN_WORKER("runner_run_worker", Duration.ofSeconds(10)),
    /** A batch's claim, record and completion, each one statement. */
    ITEM_WORKER("runner_item_worker", Duration.ofSeconds(10)),
    INGEST("runner_ingest", Duration.ofSeconds(10)),
    /** The sweeps and retention in batches of thousands of rows, within a tick of at most 30 s. */
    SCHEDULER("runner_scheduler", Duration.ofSeconds(20)),
    DEAD_LETTER("runner_dead_letter", Duration.ofSeconds(10));

    private final String roleName;
    private final Duration statementTimeout;

    DatabaseRole(String roleName, Duration statementTimeout) {
        this.roleName = roleName;
        this.statementTimeout = statementTimeout;
    }

    /** The Postgres role, and the {@code username} its secret holds. */
    public String roleName() {
        return roleName;
    }

    /**
     * The longest any statement of the role may run before Postgres cancels it ({@code statement_timeout}, set on the
     * role by R__runtime_roles.sql, so every session of it has it, behind RDS Proxy too): no request or batch holds
     * a connection for minutes, whatever a table has grown to. DatabaseRoleIT holds the two to each other.
     */
    public Duration statementTimeout() {
        return statementTimeout;
    }

    /** The login secret's name: the deployment's prefix, then the role's name. */
    public String secretName(String prefix) {
        return prefix + roleName;
    }

    /**
     * Lets the role log in with {@code password} (re-set at every deploy, so the database follows a
     * secret rotated without it). The driver hashes the password (SCRAM) before sending it, so no
     * statement log on the server holds it; the role's name is quoted by the server's {@code %I}.
     */
    public void enableLogin(Connection owner, String password) throws SQLException {
        String alter;
        try (PreparedStatement format = owner.prepareStatement("select format('alter role %I login', ?)")) {
            format.setString(1, roleName);
            try (ResultSet row = format.executeQuery()) {
                row.next();
                alter = row.getString(1);
            }
        }
        try (Statement statement = owner.createStatement()) {
            statement.execute(alter);
        }
        owner.unwrap(PGConnection.class).alterUserPassword(roleName, password.toCharArray(), "scram-sha-256");
    }
}
