package dev.runner.store;

import org.postgresql.PGConnection;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The database role each runtime function logs in as. {@code db/migration/R__runtime_roles.sql}
 * creates them (without a login) and grants each what its function's job needs; the owner, which
 * only Migrate uses, keeps the schema. A role's login secret is named {@link #secretName} under a
 * deployment's prefix, and Migrate gives the role its login from that secret ({@link #enableLogin}).
 */
public enum DatabaseRole {
    WEBHOOK("runner_webhook"),
    API("runner_api"),
    RUN_WORKER("runner_run_worker"),
    ITEM_WORKER("runner_item_worker"),
    INGEST("runner_ingest"),
    SCHEDULER("runner_scheduler"),
    DEAD_LETTER("runner_dead_letter");

    private final String roleName;

    DatabaseRole(String roleName) {
        this.roleName = roleName;
    }

    /** The Postgres role, and the {@code username} its secret holds. */
    public String roleName() {
        return roleName;
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
