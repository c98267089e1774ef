package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A keyed call given a null {@code BodyHandler} (a bug in the app: a handler field not yet set).
 * {@code HttpClient.send} and {@code sendAsync} throw {@link NullPointerException} at once,
 * before anything is sent. A keyed call journals the operation, sends it (the server acts: the
 * order exists), and only fails with the NullPointerException once the response has come, when
 * the handler is needed: the caller sees a bug report for a call that took effect, and the journal
 * says SUCCEEDED.
 */
class NullBodyHandlerTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  void aKeyedSendAsyncWithANullHandlerSendsNothing() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order");
    HttpRequest request = Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}");
    BodyHandler<String> handler = null;
    try {
      CompletableFuture<IdempotentHttpResponse<String>> future = call.sendAsync(request, handler);
      ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(10, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof NullPointerException, "told: " + e.getCause());
    } catch (NullPointerException thrownAtOnce) {
      // as HttpClient does
    }
    assertEquals(0, server.effectCount(call.key().value()),
        "a keyed sendAsync with a null BodyHandler took effect at the server (journal: "
            + f.executor.find(call.operationId()).map(r -> r.state().toString()).orElse("nothing")
            + "), then failed with a NullPointerException; HttpClient throws it before sending anything");
    assertTrue(f.executor.find(call.operationId()).isEmpty(), "nothing journaled");
  }

  @Test
  void aKeyedSendWithANullHandlerSendsNothing() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order");
    HttpRequest request = Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}");
    BodyHandler<String> handler = null;
    assertThrows(NullPointerException.class, () -> call.send(request, handler));
    assertEquals(0, server.effectCount(call.key().value()),
        "a keyed send with a null BodyHandler took effect at the server (journal: "
            + f.executor.find(call.operationId()).map(r -> r.state().toString()).orElse("nothing")
            + ") before its NullPointerException; HttpClient throws it before sending anything");
    assertTrue(f.executor.find(call.operationId()).isEmpty(), "nothing journaled");
  }
}
