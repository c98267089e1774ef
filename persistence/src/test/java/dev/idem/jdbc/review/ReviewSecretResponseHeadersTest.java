package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.storage.EmbeddedFiles;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (secrets): the executor keeps every header its secret rule names out of the journaled
 * request (the wide default rule, plus the app's {@code secretHeaders}), but nothing applies that
 * rule to the response it journals. JdbcJournal strips only its four exact names (and its own
 * {@code excludeHeaders}) from a stored response, so a credential a server sends back in a header
 * (OpenStack Keystone's POST /v3/auth/tokens answers with {@code X-Subject-Token}; a login POST
 * answers with {@code X-Auth-Token}; a server echoes the app's {@code X-Merchant-Pin}) lands in
 * {@code response_json} in clear, where the executor would have kept the same name out of
 * {@code request_json}.
 */
class ReviewSecretResponseHeadersTest {
  @TempDir
  Path tmp;

  @Test
  void aResponseHeaderTheExecutorsSecretRuleNamesIsNotStoredInClear() throws Exception {
    Path dir = tmp.resolve("journal");
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://identity.example.test/v3/auth/tokens"))
        .header("X-Merchant-Pin", "qzPLANTrequestpin")
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
    Operation op = Operation.builder("issue-token", request).build();
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir);
        IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal)
            .secretHeaders(Set.of("X-Merchant-Pin")).build()) {
      ResponseSnapshot answer = new ResponseSnapshot(201, Map.of(
          "X-Subject-Token", List.of("qzPLANTsubjecttoken"),
          "X-Auth-Token", List.of("qzPLANTauthtoken"),
          "X-Merchant-Pin", List.of("qzPLANTechoedpin"),
          "Content-Type", List.of("application/json")), "{}".getBytes(StandardCharsets.UTF_8));
      executor.execute(op, (r, key) -> answer);
      assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    }
    String stored = storedJson(dir);
    for (String planted : List.of("qzPLANTrequestpin", "qzPLANTsubjecttoken", "qzPLANTauthtoken", "qzPLANTechoedpin")) {
      assertFalse(stored.contains(planted), planted + " reached the journal file (request_json || response_json): "
          + stored);
    }
  }

  /**
   * The executor refuses a request URI whose query carries {@code X-Amz-Signature} or
   * {@code access_token} ("the journal would keep it in clear"), but the same credential in a
   * stored response's {@code Location} (a 201 or 303 to a pre-signed download URL) is stored as it
   * came, in clear, in response_json.
   */
  @Test
  void aCredentialInTheQueryOfAStoredLocationIsNotStoredInClear() throws Exception {
    Path dir = tmp.resolve("journal-location");
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.test/v1/exports"))
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
    Operation op = Operation.builder("create-export", request).build();
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir);
        IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build()) {
      ResponseSnapshot answer = new ResponseSnapshot(201, Map.of("Location", List.of(
          "https://bucket.example.test/export-1.csv?X-Amz-Credential=AKIAqzPLANTcred&X-Amz-Signature=qzPLANTsig"
              + "&access_token=qzPLANTaccess")), new byte[0]);
      executor.execute(op, (r, key) -> answer);
      assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    }
    String stored = storedJson(dir);
    for (String planted : List.of("qzPLANTcred", "qzPLANTsig", "qzPLANTaccess")) {
      assertFalse(stored.contains(planted), planted + " reached the journal file in a stored Location: " + stored);
    }
  }

  private static String storedJson(Path dir) throws Exception {
    try (Connection c = DriverManager.getConnection(
            "jdbc:sqlite:" + dir.toRealPath().resolve(EmbeddedFiles.DATABASE_FILE));
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT request_json || ' ' || response_json FROM idem_operation")) {
      StringBuilder sb = new StringBuilder();
      while (rs.next()) {
        sb.append(rs.getString(1)).append('\n');
      }
      return sb.toString();
    }
  }
}
