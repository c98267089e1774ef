package dev.idem.webhooks.internal;

import java.sql.Connection;
import java.sql.SQLException;

/** Opens a new connection to the inbox's database. */
@FunctionalInterface
public interface ConnectionSource {
  Connection open() throws SQLException;
}
