package dev.runner.store;

import dev.runner.config.RunnerConfig;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Each function's database role, logged in with the password Migrate gives it, on the real
 * Postgres: it reads what its job reads, and a statement outside its grants is refused with
 * {@code 42501} (insufficient privilege). That each role does its whole job is shown by the
 * local runtime's and the functions' tests, which run every function as its own role.
 */
class DatabaseRoleIT {

    /** Outside every runtime role's grants: the schema's history, and creating objects. */
    private static final List<String> REFUSED_TO_ALL = List.of(
            "select * from flyway_schema_history",
            "create table intruder (id int)",
            "drop table runs",
            "alter table runs add column intruder int",
            "truncate execution_items");

    private static final Map<DatabaseRole, List<String>> REFUSED = new EnumMap<>(Map.of(
            DatabaseRole.WEBHOOK, List.of("select * from handler_signing_keys", "select * from api_keys", "select * from schedules",
                    "select * from dead_letters", "delete from runs", "update tenant_integrations set enabled = false"),
            DatabaseRole.INGEST, List.of("select * from handler_signing_keys", "select * from api_keys", "delete from runs",
                    "insert into ingest_producers (sender_id, tenants) values ('x', '{}')"),
            DatabaseRole.RUN_WORKER, List.of("select * from api_keys", "update handler_signing_keys set secret = 'x'",
                    "select * from webhook_deliveries", "delete from runs", "select webhook_secrets from tenant_integrations",
                    "select * from tenant_integrations"),
            DatabaseRole.ITEM_WORKER, List.of("select * from api_keys", "update handler_signing_keys set secret = 'x'",
                    "delete from execution_items", "select * from pending_sends", "select * from ingest_producers",
                    "delete from paused_handlers", "update tenant_integrations set enabled = false",
                    "update paused_handlers set handler_key = 'x'", "select webhook_secrets from tenant_integrations",
                    "select * from tenant_integrations"),
            DatabaseRole.SCHEDULER, List.of("select * from api_keys", "select * from handler_signing_keys",
                    "delete from schedules", "update tenant_integrations set enabled = false",
                    "select webhook_secrets from tenant_integrations"),
            DatabaseRole.DEAD_LETTER, List.of("select * from tenant_integrations", "select * from api_keys",
                    "select * from handler_signing_keys", "delete from dead_letters"),
            DatabaseRole.API, List.of("delete from runs", "delete from dead_letters", "delete from api_keys")));

    /** What each role's job needs at the least: reading its main tables. */
    private static final Map<DatabaseRole, List<String>> ALLOWED = new EnumMap<>(Map.of(
            DatabaseRole.WEBHOOK, List.of("select webhook_secrets from tenant_integrations", "select count(*) from webhook_deliveries",
                    "select count(*) from pending_sends"),
            DatabaseRole.INGEST, List.of("select count(*) from ingest_producers", "select count(*) from delivery_ids",
                    "select webhook_secrets from tenant_integrations"),
            DatabaseRole.RUN_WORKER, List.of("select count(*) from handler_signing_keys", "select count(*) from execution_items",
                    "select enabled, settings::text from tenant_integrations"),
            DatabaseRole.ITEM_WORKER, List.of("select count(*) from handler_signing_keys", "select count(*) from paused_handlers",
                    "select tenant_id, integration_key, enabled, settings::text, schedules::text from tenant_integrations",
                    "select 1 from paused_handlers for key share", "select 1 from tenant_integrations where not enabled for share"),
            DatabaseRole.SCHEDULER, List.of("select count(*) from schedules", "select enabled from tenant_integrations",
                    "delete from delivery_ids where false",
                    "delete from execution_items where false", "delete from runs where false", "delete from dead_letters where false"),
            DatabaseRole.DEAD_LETTER, List.of("select count(*) from dead_letters", "select count(*) from execution_items"),
            DatabaseRole.API, List.of("select count(*) from api_keys", "select count(*) from handler_signing_keys")));

    private static TestStack stack;
    private static final Map<DatabaseRole, String> PASSWORDS = new EnumMap<>(DatabaseRole.class);

    @BeforeAll
    static void enableLogins() {
        stack = TestStack.create(Map.of());
        for (DatabaseRole role : DatabaseRole.values()) {
            PASSWORDS.put(role, UUID.randomUUID().toString());
        }
        RunnerConfig.Database owner = stack.config().database();
        Database.enableLogins(owner.jdbcUrl(), Credentials.fixed(owner.user(), owner.password()), PASSWORDS::get);
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @ParameterizedTest
    @EnumSource(DatabaseRole.class)
    void aStatementOutsideTheRolesGrantsIsRefused(DatabaseRole role) throws SQLException {
        List<String> notRefused = new ArrayList<>();
        try (Connection connection = login(role); Statement statement = connection.createStatement()) {
            List<String> refused = new ArrayList<>(REFUSED_TO_ALL);
            refused.addAll(REFUSED.get(role));
            for (String sql : refused) {
                try {
                    statement.execute(sql);
                    notRefused.add(sql);
                } catch (SQLException e) {
                    if (!"42501".equals(e.getSQLState())) {
                        notRefused.add(sql + " (" + e.getSQLState() + ")");
                    }
                }
            }
        }
        assertEquals(List.of(), notRefused, role + " may run what it must not");
    }

    @ParameterizedTest
    @EnumSource(DatabaseRole.class)
    void theRoleLogsInWithItsSecretsPasswordAndReadsItsTables(DatabaseRole role) throws SQLException {
        try (Connection connection = login(role); Statement statement = connection.createStatement()) {
            for (String sql : ALLOWED.get(role)) {
                statement.execute(sql);
            }
            try (var row = statement.executeQuery("select current_user")) {
                row.next();
                assertEquals(role.roleName(), row.getString(1));
            }
        }
    }

    /** Each role's sessions have the statement timeout DatabaseRole gives it: no statement of a function runs for minutes. */
    @ParameterizedTest
    @EnumSource(DatabaseRole.class)
    void everySessionOfTheRoleHasItsStatementTimeout(DatabaseRole role) throws SQLException {
        try (Connection connection = login(role); Statement statement = connection.createStatement();
             var row = statement.executeQuery("select setting::bigint from pg_settings where name = 'statement_timeout'")) {
            row.next();
            assertEquals(role.statementTimeout().toMillis(), row.getLong(1), role + "'s statement_timeout in milliseconds");
        }
    }

    private static Connection login(DatabaseRole role) throws SQLException {
        // The data source, as the functions' pool: the URL's own user parameter gives way to the login.
        return new LoginDataSource(stack.config().database().jdbcUrl(), Credentials.fixed(role.roleName(), PASSWORDS.get(role)))
                .getConnection();
    }
}
