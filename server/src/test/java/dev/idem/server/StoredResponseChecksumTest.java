package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: the guard's stored answers carried no checksum, so a changed byte in the store's file
 * was replayed to the client as the service's answer. Now it is refused; answers stored before the
 * checksum existed are read as before.
 */
class StoredResponseChecksumTest {
  static final Fingerprint A = new Fingerprint("a".repeat(64));
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @TempDir
  Path dir;

  private static void complete(JdbcIdempotencyStore s, RecordId id, String body) {
    long g = ((ClaimAttempt.Claimed) s.claim(id, A, "svc", T0, T0.plusSeconds(30), T0.plus(Duration.ofDays(1))))
        .generation();
    assertTrue(s.complete(id, g, "svc", T0, new StoredResponse(201, Map.of("Location", List.of("/orders/1")),
        body.getBytes(StandardCharsets.UTF_8), false), T0.plus(Duration.ofDays(1))));
  }

  @Test
  void aChangedByteOfAStoredAnswerIsRefusedNotReplayed() throws Exception {
    Path db = dir.resolve("idem.db");
    RecordId victim = new RecordId("alice", "POST /orders", "k-victim");
    RecordId other = new RecordId("alice", "POST /orders", "k-other");
    try (JdbcIdempotencyStore s = JdbcIdempotencyStore.sqlite(db)) {
      complete(s, victim, "{\"order\":1,\"total\":\"100.00\"}");
      complete(s, other, "{\"order\":2,\"total\":\"200.00\"}");
    }
    byte[] bytes = Files.readAllBytes(db);
    int at = indexOf(bytes, "\"total\":\"100.00\"".getBytes(StandardCharsets.UTF_8));
    assertTrue(at > 0, "the stored body is in the database file");
    bytes[at + 9] = '9'; // 900.00: still a well-formed answer, a different one
    Files.write(db, bytes);

    try (JdbcIdempotencyStore s = JdbcIdempotencyStore.sqlite(db)) {
      IdempotencyStoreException e = assertThrows(IdempotencyStoreException.class, () -> s.find(victim));
      assertTrue(e.getMessage().contains("checksum") && e.getMessage().contains("never replayed"), e.getMessage());
      // A retry of the victim's key is refused, not answered with the changed bytes.
      assertThrows(IdempotencyStoreException.class, () -> s.claim(victim, A, "svc", T0, T0.plusSeconds(30),
          T0.plus(Duration.ofDays(1))));
      assertArrayEquals("{\"order\":2,\"total\":\"200.00\"}".getBytes(StandardCharsets.UTF_8),
          s.find(other).orElseThrow().response().orElseThrow().body());
    }
  }

  @Test
  void anAnswerStoredBeforeTheChecksumExistedReadsAsBefore() throws Exception {
    Path db = dir.resolve("idem.db");
    RecordId id = new RecordId("alice", "POST /orders", "k-old");
    try (JdbcIdempotencyStore s = JdbcIdempotencyStore.sqlite(db)) {
      complete(s, id, "{\"order\":3}");
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement st = c.createStatement()) {
      assertEquals(1, st.executeUpdate("UPDATE idem_server_record SET headers = 'Location:/orders/1' || char(10)"));
    }
    try (JdbcIdempotencyStore s = JdbcIdempotencyStore.sqlite(db)) {
      StoredResponse r = s.find(id).orElseThrow().response().orElseThrow();
      assertEquals(Map.of("Location", List.of("/orders/1")), r.headers());
      assertArrayEquals("{\"order\":3}".getBytes(StandardCharsets.UTF_8), r.body());
    }
  }

  /** Where {@code needle} first stands in {@code haystack}: ISO-8859-1 maps each byte to one char. */
  private static int indexOf(byte[] haystack, byte[] needle) {
    return new String(haystack, StandardCharsets.ISO_8859_1).indexOf(new String(needle, StandardCharsets.ISO_8859_1));
  }
}
