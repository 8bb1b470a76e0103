package dev.runner.store;

import org.postgresql.ds.PGSimpleDataSource;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Opens Postgres connections with the current {@link Credentials}; when Postgres refuses them,
 * refreshes them and tries once more at once. The pool asks it for each new connection, so after
 * a rotation the first refused connection re-reads the secret and the pool heals itself: no caller
 * waits out the pool's connection timeout, and connections already open keep working.
 */
final class LoginDataSource implements DataSource {

    private final PGSimpleDataSource postgres = new PGSimpleDataSource();
    private final Credentials credentials;

    LoginDataSource(String jdbcUrl, Credentials credentials) {
        this.postgres.setURL(jdbcUrl);
        // Unless the URL names another: the CA file sslrootcert names, else the JVM's trust store, and a cipher cheap under C1.
        Properties named = org.postgresql.Driver.parseURL(jdbcUrl, null);
        if (named == null || named.getProperty("sslfactory") == null) {
            this.postgres.setSslfactory(PostgresTls.class.getName());
        }
        // Unnamed statements only: RDS Proxy pins a client's session to one database connection once it
        // uses a named prepared statement. The hot statements keep their plans in functions instead (V11).
        this.postgres.setPrepareThreshold(0);
        this.postgres.setReWriteBatchedInserts(true);
        // Postgres's Detail quotes the row ("Key (external_id)=(…)", "Failing row contains (…)"), and
        // a failed batch entry its statement with parameters: the driver's messages leave both out,
        // so no exception's message or stack trace carries a row's values into a log line.
        this.postgres.setLogServerErrorDetail(false);
        this.credentials = Credentials.requireNonNull(credentials);
    }

    @Override
    public Connection getConnection() throws SQLException {
        Credentials.Login login = credentials.current();
        try {
            return open(login);
        } catch (SQLException e) {
            if (!Credentials.refusedLogin(e)) {
                throw e;
            }
            Credentials.Login fresh = credentials.refreshed();
            if (fresh.equals(login)) {
                throw e;
            }
            return open(fresh);
        }
    }

    private Connection open(Credentials.Login login) throws SQLException {
        return login.user() == null ? postgres.getConnection() : postgres.getConnection(login.user(), login.password());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return postgres.getConnection(username, password);
    }

    @Override
    public PrintWriter getLogWriter() {
        return postgres.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        postgres.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) {
        postgres.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() {
        return postgres.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return postgres.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        if (type.isInstance(this)) {
            return type.cast(this);
        }
        throw new SQLException("not a wrapper of " + type.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> type) {
        return type.isInstance(this);
    }
}
