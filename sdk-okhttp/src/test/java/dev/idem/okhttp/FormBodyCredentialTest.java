package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.client;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationRecord;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.ReceivedRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import okhttp3.FormBody;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A credential in a form body ({@code client_secret=}, {@code password=}) is never journaled: a
 * tagged call is refused before anything is journaled or sent, as the same pair in the query is,
 * and an untagged call the fresh-key policy would key (an OAuth token call the app never marked)
 * goes out once, unjournaled, as under the pass-through policy. A form body without one is keyed
 * and journaled as before.
 */
class FormBodyCredentialTest {
  private static final String SECRET = "planted-client-secret-formbody";

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  private OkHttpClient freshKeyClient() {
    return client(IdemOkHttp.builder(f.executorBuilder().build()).untaggedPolicy(UntaggedPolicy.FRESH_KEY).build());
  }

  private Request tokenCall() {
    return new Request.Builder().url(server.url("/oauth/token").toString())
        .post(new FormBody.Builder().add("grant_type", "client_credentials").add("client_id", "orders")
            .add("client_secret", SECRET).build())
        .build();
  }

  @Test
  void anUntaggedFormWithACredentialGoesOutOnceUnjournaled() throws Exception {
    try (Response r = freshKeyClient().newCall(tokenCall()).execute()) {
      // The test server answers a keyless POST 400; what matters is what reached it, and the journal.
      assertTrue(IdempotencyResult.of(r).isEmpty(), "not an operation");
    }
    List<ReceivedRequest> received = server.recordedRequests();
    assertEquals(1, received.size());
    assertEquals(Optional.empty(), received.get(0).keyHeader(), "sent as a pass-through call: no key");
    assertEquals("grant_type=client_credentials&client_id=orders&client_secret=" + SECRET, received.get(0).body(),
        "the body the app wrote, whole");
    assertEquals(List.of(), f.allRecords(), "nothing journaled");
  }

  @Test
  void aTaggedFormWithACredentialIsRefusedBeforeAnythingIsJournaledOrSent() throws Exception {
    IdempotentOperation op = IdempotentOperation.of("token");
    Request tagged = tokenCall().newBuilder().tag(IdempotentOperation.class, op).build();
    Exception e = assertThrows(Exception.class, () -> freshKeyClient().newCall(tagged).execute().close());
    assertTrue(e.getMessage().contains("form body field 'client_secret'"), e.getMessage());
    assertFalse(e.getMessage().contains(SECRET), e.getMessage());
    assertEquals(0, server.requestCount(), "nothing sent");
    assertEquals(List.of(), f.allRecords(), "nothing journaled");
  }

  @Test
  void anUntaggedFormWithoutACredentialIsKeyedAndJournaled() throws Exception {
    Request form = new Request.Builder().url(server.url("/orders").toString())
        .post(new FormBody.Builder().add("item", "book").add("qty", "1").build()).build();
    try (Response r = freshKeyClient().newCall(form).execute()) {
      assertEquals(201, r.code());
    }
    List<OperationRecord> records = f.allRecords();
    assertEquals(1, records.size());
    assertEquals("untagged-post", records.get(0).id().operation());
    assertEquals("item=book&qty=1", new String(records.get(0).request().body(), StandardCharsets.UTF_8));
    assertEquals(Optional.of(records.get(0).id().key().value()), server.recordedRequests().get(0).keyHeader());
  }
}
