package dev.idem.webhooks.internal;

import java.sql.Connection;
import java.sql.SQLException;

/** A piece of work for the writer's transaction. It must not commit or roll back. */
@FunctionalInterface
public interface SqlWork<T> {
  T run(Connection c) throws SQLException;
}
