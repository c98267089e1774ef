package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.client;
import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 14, "withReference("cart-42") looks like deduplication but is not": two submissions with
 * the same reference made two keys and two server effects.
 */
class ReferenceKeyTest {
  static final byte[] SECRET = "okhttp-test-secret-0123456789".getBytes(StandardCharsets.UTF_8);

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  private static String submit(OkHttpClient client, IdempotentServer server, IdempotentOperation op)
      throws Exception {
    try (Response r = client.newCall(order(server.url("/orders"), op)).execute()) {
      assertEquals(201, r.code());
      return IdempotencyResult.of(r).orElseThrow().operationId().key().value();
    }
  }

  @Test
  void withReferenceStillMeansTwoKeysAndTwoEffects() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(f.executorBuilder().referenceKeySecret(SECRET).build()).build());
    String k1 = submit(client, server, IdempotentOperation.of("create-order").withReference("cart-42"));
    String k2 = submit(client, server, IdempotentOperation.of("create-order").withReference("cart-42"));
    assertNotEquals(k1, k2);
    assertEquals(2, server.totalEffects(), "a label, not deduplication (as its Javadoc now says)");
  }

  @Test
  void forReferenceMeansOneKeyAndOneEffect() throws Exception {
    OkHttpClient client = client(IdemOkHttp.builder(f.executorBuilder().referenceKeySecret(SECRET).build()).build());
    String k1 = submit(client, server, IdempotentOperation.forReference("create-order", "cart-42"));
    String k2 = submit(client, server, IdempotentOperation.forReference("create-order", "cart-42"));
    assertEquals(k1, k2);
    assertEquals(IdempotencyKey.derive(SECRET, OperationId.DEFAULT_SCOPE, "create-order", "cart-42").value(), k1);
    assertEquals(1, server.requestCount(), "the second submission was answered from the journal");
    assertEquals(1, server.totalEffects());
  }

  @Test
  void afterACrashWithAFreshJournalTheServerReplaysInsteadOfRunningItAgain() throws Exception {
    OkHttpClient before = client(IdemOkHttp.builder(f.executorBuilder().referenceKeySecret(SECRET).build()).build());
    String k1 = submit(before, server, IdempotentOperation.forReference("create-order", "cart-42"));

    // A new process: new executor, same secret, an empty journal; the app stored nothing.
    IdempotentExecutor restarted = IdempotentExecutor.builder().journal(new InMemoryJournal())
        .clock(f.time.clock()).sleeper(f.time.sleeper()).referenceKeySecret(SECRET.clone()).build();
    OkHttpClient after = client(IdemOkHttp.builder(restarted).build());
    try (Response r = after.newCall(order(server.url("/orders"),
        IdempotentOperation.forReference("create-order", "cart-42"))).execute()) {
      assertEquals(201, r.code());
      IdempotencyResult result = IdempotencyResult.of(r).orElseThrow();
      assertEquals(k1, result.operationId().key().value());
      assertTrue(result.replayed(), "the server's dedup by key answered");
    }
    Fixture.assertKeyOnEveryRequest(server, k1, 2);
    assertEquals(1, server.effectCount(k1));
  }

  @Test
  void withoutASecretTheCallIsRefusedBeforeAnythingIsJournaledOrSent() throws Exception {
    OkHttpClient client = client(f.idem());
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> client.newCall(
        order(server.url("/orders"), IdempotentOperation.forReference("create-order", "cart-42"))).execute());
    assertTrue(e.getMessage().contains("referenceKeySecret"), e.getMessage());
    assertEquals(0, server.requestCount());
    assertTrue(f.allRecords().isEmpty());
  }

  @Test
  void theDerivedKeyIsAvailableFromTheResultNotBeforehand() throws Exception {
    IdempotentOperation op = IdempotentOperation.forReference("create-order", "cart-42");
    assertThrows(IllegalStateException.class, op::key);
    assertEquals("create-order", op.name());
    assertTrue(op.toString().contains("derived from reference"), op.toString());
    assertEquals(Optional.of("cart-42"), op.reference());
    OkHttpClient client = client(IdemOkHttp.builder(f.executorBuilder().referenceKeySecret(SECRET).build()).build());
    String key = submit(client, server, op.withScope("tenant-7"));
    assertEquals(IdempotencyKey.derive(SECRET, "tenant-7", "create-order", "cart-42").value(), key);
    assertEquals(OperationState.SUCCEEDED, f.journal.findByReference("tenant-7", "cart-42").get(0).state());
  }
}
