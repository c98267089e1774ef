package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The secret rule names every header ending in {@code -key} (a credential such as
 * {@code Ocp-Apim-Subscription-Key}). A key header of such a name ({@code keyHeader("X-Request-Key")})
 * must still carry the same key on every attempt, a resume after a restart included: the adapter
 * never journals its key header, and sends the journaled key in it; the credential is re-applied
 * by the resume's header supplier, never read from the journal.
 */
class KeyNamedKeyHeaderResumeTest {
  @Test
  void aResumeAfterARestartSendsTheSameKeyInAKeyNamedKeyHeaderAndNoJournaledCredential() throws Exception {
    try (IdempotentServer server = IdempotentServer.builder().keyHeader("X-Request-Key").start()) {
      InMemoryJournal shared = new InMemoryJournal();
      Fixture before = new Fixture(b -> b.journal(shared), c -> c.keyHeader("X-Request-Key"));
      server.plan().next(Fault.dropRequest());
      OperationCall call = before.client.operation("create-order").reference("cart-11")
          .policy(RetryPolicy.builder().maxAttempts(1).build());
      HttpRequest request = HttpRequest.newBuilder(server.url("/orders"))
          .header("Content-Type", "application/json")
          .header("Ocp-Apim-Subscription-Key", "sub-key-before")
          .timeout(Duration.ofSeconds(5))
          .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"K-1\"}"))
          .build();
      assertThrows(OperationUncertainException.class, () -> call.send(request, BodyHandlers.ofString()));

      // "After the restart", moments later on the same virtual clock (an executor on the system clock
      // would find the operation past its age limit and, as it may have reached the server, end it
      // UNCERTAIN unsent): a new executor and client over the same journal.
      IdempotentExecutor after = IdempotentExecutor.builder().journal(shared).clock(before.time.clock()).build();
      IdempotentHttpClient client = IdempotentHttpClient.builder(Fixture.JDK).idempotentExecutor(after)
          .keyHeader("X-Request-Key").build();
      OperationRecord rec = after.findByReference("default", "cart-11").get(0);
      assertEquals(call.key(), rec.id().key());
      assertEquals(List.of("content-type"), List.copyOf(rec.request().headers().keySet()),
          "neither the credential nor the key header is in the journaled request");
      after.redrive(rec.id());
      ResumeTransport resume = client.resumeTransport(s -> Map.of("Ocp-Apim-Subscription-Key", "sub-key-after"),
          Duration.ofSeconds(5));
      var outcome = after.execute(Operation.builder(rec.id().operation(), rec.request())
          .scope(rec.id().scope()).key(rec.id().key()).build(), resume);

      assertEquals(201, outcome.response().status());
      List<ReceivedRequest> got = server.recordedRequests();
      assertEquals(2, got.size());
      got.forEach(r -> assertEquals(Optional.of(call.key().value()), r.header("X-Request-Key"),
          "the same key on every attempt, before and after the restart"));
      assertEquals(Optional.of("sub-key-after"), got.get(1).header("Ocp-Apim-Subscription-Key"));
      assertEquals(1, server.effectCount(call.key().value()));
      OperationRecord done = after.find(rec.id()).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, done.state());
      assertTrue(done.request().header("Ocp-Apim-Subscription-Key").isEmpty());
    }
  }
}
