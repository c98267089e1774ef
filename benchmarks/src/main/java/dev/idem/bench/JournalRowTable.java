package dev.idem.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Base64;

/**
 * The floor's table keeping what the journal keeps: the journal's own SQLite table, created by its
 * shipped migrations (so with every index its reads need: due order for resume, state and age for
 * purge and counts, references, undelivered outcomes), and rows of the journal's shape and size:
 * the request as stored for a resend after a restart, its checksum, the claim, then the attempt
 * and the response. The begin inserts the row claimed; the outcome is one UPDATE.
 *
 * <p>No Idem code runs: the JSON texts are built once, not encoded per call (a textbook design
 * would encode them, so this floor is the lower of the two), and the statements are plain JDBC.
 * What it measures beside {@link KeyTable} is the cost of the row and its indexes in SQLite.
 */
final class JournalRowTable implements FloorTable {
  private static final String MIGRATIONS = "dev/idem/jdbc/migrations/sqlite/";
  private static final String FINGERPRINT = "9a823ee7c2b977b03f76805cd0941aaced51daaba743517d9dec46fb3b538b11";
  private static final String REQUEST_CHECK = "33e88cdfb89e2dc54e99ce567fa7d72dd20901f69abdcff95b37eb3b99e9c112";
  private static final String OWNER = "idem-755-7f701dc4";
  private static final String ATTEMPTS = "[{\"number\":1,\"generation\":1,\"startedAt\":\"2026-12-08T01:29:42.453898649Z\","
      + "\"endedAt\":\"2026-12-08T01:29:42.456804561Z\",\"classification\":\"SUCCESS\",\"status\":201,"
      + "\"reason\":\"HTTP 201\",\"delay\":\"PT0S\",\"decision\":\"success\"}]";
  private static final String RESPONSE = "{\"v\":1,\"status\":201,\"headers\":{\"content-length\":[\"33\"],"
      + "\"content-type\":[\"application/json\"],\"date\":[\"Tue, 08 Dec 2026 01:29:42 GMT\"]},"
      + "\"body\":\"eyJpZCI6Im9yZF8xIiwic3RhdHVzIjoiY3JlYXRlZCJ9\","
      + "\"sum\":\"6e837f1254e737f4a116a92320213862ab492d0d08b986f4bfe4a81e4103ad95\"}";

  private final String requestJson;
  private PreparedStatement insert;
  private PreparedStatement update;

  /** @param uri the request's URI, @param body its body: the request the row keeps, as the journal stores it */
  JournalRowTable(String uri, byte[] body) {
    this.requestJson = "{\"v\":1,\"method\":\"POST\",\"uri\":\"" + uri + "\",\"headers\":{},"
        + "\"contentType\":\"application/json\",\"body\":\"" + Base64.getEncoder().encodeToString(body) + "\"}";
  }

  @Override
  public void open(Connection connection) throws SQLException {
    try (Statement st = connection.createStatement()) {
      for (String line : resource("index.txt").split("\n")) {
        String file = line.strip();
        if (file.isEmpty() || file.startsWith("#")) {
          continue;
        }
        String sql = resource(file).replaceAll("(?m)^\\s*--.*$", "");
        for (String statement : sql.split(";")) {
          if (!statement.isBlank()) {
            st.execute(statement);
          }
        }
      }
    }
    insert = connection.prepareStatement("INSERT INTO idem_operation (scope, operation, op_key, reference,"
        + " fingerprint, request_json, request_check, state, owner, generation, lease_expires_at, created_at,"
        + " updated_at, attempts_json, queued) VALUES ('default', 'create-order', ?, NULL, ?, ?, ?, 'IN_FLIGHT', ?, 1,"
        + " ?, ?, ?, '[]', 0)");
    update = connection.prepareStatement("UPDATE idem_operation SET state = ?, lease_expires_at = NULL,"
        + " next_attempt_at = NULL, updated_at = ?, response_json = ?, reason = ?, attempts_json = ?"
        + " WHERE scope = 'default' AND operation = 'create-order' AND op_key = ?");
  }

  @Override
  public void write(String key, String text, String state, long now) throws SQLException {
    long nanos = now * 1_000_000L;
    if (state.equals("PENDING")) {
      insert.setString(1, key);
      insert.setString(2, FINGERPRINT);
      insert.setString(3, requestJson);
      insert.setString(4, REQUEST_CHECK);
      insert.setString(5, OWNER);
      insert.setLong(6, nanos + 30_000_000_000L);
      insert.setLong(7, nanos);
      insert.setLong(8, nanos);
      insert.executeUpdate();
    } else {
      update.setString(1, state);
      update.setLong(2, nanos);
      update.setString(3, RESPONSE);
      update.setString(4, "HTTP 201");
      update.setString(5, ATTEMPTS);
      update.setString(6, key);
      if (update.executeUpdate() != 1) {
        throw new SQLException("no row for " + key);
      }
    }
  }

  @Override
  public void close() throws SQLException {
    if (insert != null) {
      insert.close();
    }
    if (update != null) {
      update.close();
    }
  }

  private static String resource(String name) {
    try (InputStream in = JournalRowTable.class.getClassLoader().getResourceAsStream(MIGRATIONS + name)) {
      if (in == null) {
        throw new IllegalStateException("the journal's migration " + MIGRATIONS + name + " is not on the class path");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
