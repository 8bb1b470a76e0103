package dev.runner.store;

import java.util.Objects;

/**
 * The user and password new pool connections log in with: asked at every new connection, and
 * asked to refresh when Postgres refuses them, so a rotated secret is picked up by the next
 * connection while the open ones keep working.
 */
public interface Credentials {

    /** A login; the password never reaches {@link #toString}. */
    record Login(String user, String password) {
        @Override
        public String toString() {
            return "Login[user=" + user + ", password=***]";
        }
    }

    Login current();

    /** After Postgres refused {@link #current}: the login as its source has it now (a re-read secret). */
    Login refreshed();

    /** Fixed values (tests, development); null user = the driver's default. */
    static Credentials fixed(String user, String password) {
        Login login = new Login(user, password);
        return new Credentials() {
            @Override
            public Login current() {
                return login;
            }

            @Override
            public Login refreshed() {
                return login;
            }
        };
    }

    /** True for Postgres' refusals of a login: 28P01 wrong password, 28000 no such role or no access. */
    static boolean refusedLogin(java.sql.SQLException e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.sql.SQLException sql
                    && ("28P01".equals(sql.getSQLState()) || "28000".equals(sql.getSQLState()))) {
                return true;
            }
        }
        return false;
    }

    static Credentials requireNonNull(Credentials credentials) {
        return Objects.requireNonNull(credentials, "credentials");
    }
}
