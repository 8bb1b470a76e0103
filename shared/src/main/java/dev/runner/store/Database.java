package dev.runner.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runner.config.RunnerConfig;
import dev.runner.cost.CostTracker;
import dev.runner.log.Log;
import org.flywaydb.core.Flyway;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * Postgres through plain JDBC: a small pool, statements always parameterised, each statement told
 * to the {@link CostTracker} so benchmarks and tests can state what an operation costs.
 *
 * <p>A statement run on its own (autocommit) that Postgres aborts as a deadlock's victim or a
 * serialisation failure is run again, up to {@value #ATTEMPTS} times in all: it changed nothing,
 * and the set-based statements that lock many rows in an order of the plan's choosing (a run's
 * cancel beside its items' claims) can meet that way under load. Work in a transaction is not:
 * its caller decides.
 */
public final class Database implements AutoCloseable {

    private static final Log LOG = Log.of(Database.class);
    static final int ATTEMPTS = 3;

    /** Reads one row. */
    @FunctionalInterface
    public interface RowMapper<T> {
        T map(ResultSet row) throws SQLException;
    }

    /** Work inside one transaction. */
    @FunctionalInterface
    public interface TransactionWork<T> {
        T run(Connection connection) throws SQLException;
    }

    private final DataSource dataSource;
    private final CostTracker costs;

    public Database(DataSource dataSource, CostTracker costs) {
        this.dataSource = dataSource;
        this.costs = costs;
    }

    /** A pool that opens its first connection on first use, not here: a cold start pays for no connection it does not need. */
    public static Database connect(RunnerConfig.Database config, int poolSize, CostTracker costs) {
        return connect(config.jdbcUrl(), Credentials.fixed(config.user(), config.password()), poolSize, costs);
    }

    /** As above, logging in with {@code credentials}, refreshed when Postgres refuses them (a rotated secret). */
    public static Database connect(String jdbcUrl, Credentials credentials, int poolSize, CostTracker costs) {
        var hikari = new HikariConfig();
        hikari.setDataSource(new LoginDataSource(jdbcUrl, credentials));
        hikari.setMaximumPoolSize(poolSize);
        hikari.setMinimumIdle(0);
        hikari.setConnectionTimeout(10_000);
        hikari.setPoolName("runner");
        hikari.setInitializationFailTimeout(-1);
        return new Database(new HikariDataSource(hikari), costs);
    }

    /** Applies the Flyway migrations in {@code db/migration}; safe to call from many starts at once. */
    public static void migrate(RunnerConfig.Database config) {
        migrate(config.jdbcUrl(), Credentials.fixed(config.user(), config.password()));
    }

    public static void migrate(String jdbcUrl, Credentials credentials) {
        flyway(jdbcUrl, credentials).load().migrate();
    }

    /** Flyway on Runner's migrations, ready to load (a test may aim it at an earlier target first). */
    public static FluentConfiguration flyway(RunnerConfig.Database config) {
        return flyway(config.jdbcUrl(), Credentials.fixed(config.user(), config.password()));
    }

    private static FluentConfiguration flyway(String jdbcUrl, Credentials credentials) {
        FluentConfiguration flyway = Flyway.configure()
                .dataSource(new LoginDataSource(jdbcUrl, credentials))
                .locations("classpath:db/migration");
        // Flyway's lock as a session advisory lock, not one held in a transaction: CREATE INDEX CONCURRENTLY
        // (the online migrations) waits for every open transaction, Flyway's own too, and would wait forever.
        flyway.getPluginRegister().getPlugin(PostgreSQLConfigurationExtension.class).setTransactionalLock(false);
        return flyway;
    }

    /** Gives each runtime role its login, with the password {@code passwords} holds for it, as the owner. */
    public static void enableLogins(String jdbcUrl, Credentials owner, Function<DatabaseRole, String> passwords) {
        try (Connection connection = new LoginDataSource(jdbcUrl, owner).getConnection()) {
            for (DatabaseRole role : DatabaseRole.values()) {
                role.enableLogin(connection, passwords.apply(role));
            }
        } catch (SQLException e) {
            throw new StoreException("enable the runtime roles' logins", e);
        }
    }

    public DataSource dataSource() {
        return dataSource;
    }

    public int update(String sql, Object... params) {
        return alone(sql, connection -> update(connection, sql, params));
    }

    public int update(Connection connection, String sql, Object... params) throws SQLException {
        try (PreparedStatement statement = prepare(connection, sql, params)) {
            return statement.executeUpdate();
        }
    }

    /** One round trip that proves a connection can be had and used; throws {@link StoreException} when not. */
    public void ping() {
        query("select 1", row -> row.getInt(1));
    }

    public <T> List<T> query(String sql, RowMapper<T> mapper, Object... params) {
        return alone(sql, connection -> query(connection, sql, mapper, params));
    }

    /** A statement and its parameters, built apart from running it: what a test EXPLAINs is what runs. */
    public record Sql(String text, Object... params) {}

    public <T> List<T> query(Sql sql, RowMapper<T> mapper) {
        return query(sql.text(), mapper, sql.params());
    }

    /** One statement on a connection of its own, run again when Postgres aborted it for a conflict it can lose. */
    private <T> T alone(String sql, TransactionWork<T> statement) {
        for (int attempt = 1; ; attempt++) {
            try (Connection connection = dataSource.getConnection()) {
                return statement.run(connection);
            } catch (SQLException e) {
                if (attempt >= ATTEMPTS || !lostAConflict(e)) {
                    throw new StoreException(sql, e);
                }
                LOG.warn("statement run again", "sqlState", e.getSQLState(), "attempt", attempt + 1,
                        "statement", StoreException.firstLine(sql));
            }
        }
    }

    /** Deadlock victim (40P01) or serialisation failure (40001): Postgres rolled the statement back whole. */
    static boolean lostAConflict(SQLException failure) {
        return "40P01".equals(failure.getSQLState()) || "40001".equals(failure.getSQLState());
    }

    public <T> List<T> query(Connection connection, String sql, RowMapper<T> mapper, Object... params) throws SQLException {
        try (PreparedStatement statement = prepare(connection, sql, params);
             ResultSet rows = statement.executeQuery()) {
            List<T> result = new ArrayList<>();
            while (rows.next()) {
                result.add(mapper.map(rows));
            }
            return result;
        }
    }

    public <T> java.util.Optional<T> queryOne(String sql, RowMapper<T> mapper, Object... params) {
        List<T> rows = query(sql, mapper, params);
        return rows.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(rows.getFirst());
    }

    public <T> T inTransaction(TransactionWork<T> work) {
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(false);
            try {
                T result = work.run(connection);
                connection.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            } finally {
                connection.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            throw new StoreException("transaction", e);
        }
    }

    /** A typed array parameter ({@code uuid[]}, {@code text[]}, …), for set-based statements over a batch. */
    public static ArrayParam array(String sqlType, Object[] values) {
        return new ArrayParam(sqlType, values);
    }

    public record ArrayParam(String sqlType, Object[] values) {}

    /** A JSON text bound as {@code jsonb}. */
    public record JsonbParam(String json) {}

    private PreparedStatement prepare(Connection connection, String sql, Object[] params) throws SQLException {
        costs.sqlStatement();
        PreparedStatement statement = connection.prepareStatement(sql);
        for (int i = 0; i < params.length; i++) {
            Object param = params[i];
            switch (param) {
                case ArrayParam array -> {
                    Array sqlArray = connection.createArrayOf(array.sqlType(), array.values());
                    statement.setArray(i + 1, sqlArray);
                }
                case JsonbParam json -> {
                    var pg = new org.postgresql.util.PGobject();
                    pg.setType("jsonb");
                    pg.setValue(json.json());
                    statement.setObject(i + 1, pg);
                }
                case java.time.Instant instant -> statement.setObject(i + 1, java.time.OffsetDateTime.ofInstant(instant, java.time.ZoneOffset.UTC));
                case null -> statement.setObject(i + 1, null);
                default -> statement.setObject(i + 1, param);
            }
        }
        return statement;
    }

    @Override
    public void close() {
        if (dataSource instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the pool", e);
            }
        }
    }

    /**
     * A failed statement. The message names the statement's first line, never its parameters (they
     * may hold secrets); for an error Postgres reports, its SQL state and the constraint, table,
     * column or type it names, never its Detail, which quotes the row. A data exception's (class
     * 22) own text quotes the refused value, so only its SQL state and names are kept.
     */
    public static final class StoreException extends RuntimeException {
        public StoreException(String sql, SQLException cause) {
            super(describe(cause) + " [" + firstLine(sql) + "]", cause);
        }

        private static String describe(SQLException failure) {
            ServerErrorMessage server = serverError(failure);
            String state = server == null ? failure.getSQLState() : server.getSQLState();
            StringBuilder text = new StringBuilder("postgres");
            name(text, "", state);
            if (server == null) {
                return text.append(": ").append(failure.getMessage()).toString();
            }
            name(text, " constraint", server.getConstraint());
            name(text, " table", server.getTable());
            name(text, " column", server.getColumn());
            name(text, " type", server.getDatatype());
            if (state == null || !state.startsWith("22")) {
                text.append(": ").append(server.getMessage());
            }
            return text.toString();
        }

        /** What Postgres said, from the exception or the one a failed batch entry wraps. */
        private static ServerErrorMessage serverError(SQLException failure) {
            for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
                if (cause instanceof PSQLException postgres && postgres.getServerErrorMessage() != null) {
                    return postgres.getServerErrorMessage();
                }
                if (cause instanceof SQLException sql && sql.getNextException() instanceof PSQLException next
                        && next.getServerErrorMessage() != null) {
                    return next.getServerErrorMessage();
                }
            }
            return null;
        }

        private static void name(StringBuilder text, String what, String name) {
            if (name != null) {
                text.append(what).append(' ').append(name);
            }
        }

        private static String firstLine(String sql) {
            String trimmed = sql.strip();
            int newline = trimmed.indexOf('\n');
            return newline < 0 ? trimmed : trimmed.substring(0, newline);
        }
    }
}
