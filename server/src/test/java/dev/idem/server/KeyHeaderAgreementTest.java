package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.server.spi.Admission;
import dev.idem.core.testing.VirtualTime;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The client and the server guard read every key header of the shared table alike: the same key,
 * or both refuse it. The client's side is what an adapter does with a key header already on the
 * request ({@link AdapterSupport#keyFor}); the guard's is its answer to a POST carrying the header.
 * Every key the client accepts also reaches the guard as the same key in both of the client's
 * spellings ({@link KeyHeaderFormat}).
 */
class KeyHeaderAgreementTest {
  private static final String TABLE = "/dev/idem/server/key-header-table.json";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final IdempotentExecutor EXECUTOR = IdempotentExecutor.builder().build();
  private static final AdapterSupport CLIENT = AdapterSupport.of(EXECUTOR, "Idempotency-Key", KeyHeaderFormat.BARE,
      UntaggedPolicy.PASS_THROUGH);

  record Row(List<String> header, String key, String why) {
    @Override
    public String toString() {
      return why;
    }
  }

  @AfterAll
  static void closeExecutor() {
    EXECUTOR.close();
  }

  static Stream<Row> rows() throws IOException {
    List<Row> rows = new ArrayList<>();
    for (JsonNode r : table().get("rows")) {
      List<String> header = new ArrayList<>();
      r.get("header").forEach(v -> header.add(v.asText()));
      rows.add(new Row(header, r.get("key").isNull() ? null : r.get("key").asText(), r.get("why").asText()));
    }
    return rows.stream();
  }

  private static JsonNode table() throws IOException {
    try (InputStream in = KeyHeaderAgreementTest.class.getResourceAsStream(TABLE)) {
      return JSON.readTree(in);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void clientAndGuardReadTheSameKeyOrBothRefuse(Row row) throws Exception {
    VirtualTime time = new VirtualTime();
    try (IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).clock(time.clock())
        .scheduler(time.scheduler()).purgeInterval(null).build()) {
      Admission admission = guard.admit(post(row.header()));
      if (row.key() == null) {
        assertThrows(IdempotencyException.class, () -> CLIENT.keyFor(row.header(), null), "the client refuses it");
        Admission.Respond refused = assertInstanceOf(Admission.Respond.class, admission, "the guard refuses it");
        assertEquals(Admission.Reason.KEY_MALFORMED, refused.reason());
        assertEquals(400, refused.response().status());
        assertTrue(IdempotencyGuard.validKey(row.header()).isEmpty(), "validKey agrees");
        return;
      }
      assertEquals(IdempotencyKey.of(row.key()), CLIENT.keyFor(row.header(), null), "the client's key");
      Admission.Proceed proceed = assertInstanceOf(Admission.Proceed.class, admission, "the guard accepts it");
      assertEquals(row.key(), proceed.claim().id().key(), "the guard's key");
      guard.abandon(proceed.claim());
      for (KeyHeaderFormat format : KeyHeaderFormat.values()) {
        String sent = format.format(IdempotencyKey.of(row.key()));
        Admission.Proceed again = assertInstanceOf(Admission.Proceed.class, guard.admit(post(List.of(sent))), sent);
        assertEquals(row.key(), again.claim().id().key(), format + " spells the same key to the guard");
        guard.abandon(again.claim());
      }
    }
  }

  /** An intermediary that joins a doubled key header (RFC 9110 section 5.3) must not make one key of two. */
  @Test
  void aDoubledKeyHeaderJoinedByAnIntermediaryIsRefused() throws Exception {
    VirtualTime time = new VirtualTime();
    try (IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).clock(time.clock())
        .scheduler(time.scheduler()).purgeInterval(null).build()) {
      for (String joined : List.of("k3, k4", "k3,k4")) {
        Admission a = guard.admit(post(List.of(joined)));
        assertEquals(Admission.Reason.KEY_MALFORMED, assertInstanceOf(Admission.Respond.class, a, joined).reason());
      }
    }
  }

  /** The copy in this module keeps the rows of sdk-core's original, whenever the reactor holds both. */
  @Test
  void theCopyMatchesSdkCoresTable() throws IOException {
    Path original = Path.of("..", "sdk-core", "src", "test", "resources", "dev", "idem", "core", "http",
        "key-header-table.json");
    if (!Files.exists(original)) {
      return; // built outside the reactor's tree: nothing to compare with
    }
    JsonNode theirs = JSON.readTree(Files.readString(original, StandardCharsets.UTF_8));
    assertEquals(theirs.get("rows"), table().get("rows"), "copy " + TABLE + " again from " + original);
    assertNull(theirs.get("provenance"));
  }

  private static GuardRequest post(List<String> keyHeader) {
    return new GuardRequest("POST", "/orders", null, "application/json", keyHeader, "alice",
        GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)));
  }
}
