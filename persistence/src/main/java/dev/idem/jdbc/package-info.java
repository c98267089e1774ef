/**
 * The durable JDBC journal of Idem: {@link dev.idem.jdbc.JdbcJournal}, on embedded SQLite by
 * default and on PostgreSQL for fleets of processes. Everything in {@code dev.idem.jdbc.internal} may change
 * without notice.
 */
package dev.idem.jdbc;
