package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.IdempotencyException;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.NewOperation;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code shutdown()} lands while a keyed {@code sendAsync} is being started by the executor: the
 * call is registered (so the shutdown finds it) but its execution's future not yet known, and the
 * executor goes on to send the first attempt. The transport sees the shutdown and refuses the
 * attempt; refused at once, the executor would count it as an attempt not sent (the operation's
 * only one here: FAILED for good). Held until the shutdown has cancelled the execution, it is
 * recorded as the stopped call's: the operation PENDING with its key, no attempt used up.
 */
class ShutdownAsCallStartsTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  /** Shuts the client down right after the operation's begin, before its first attempt. */
  private static final class ShutdownAtBegin extends ForwardingJournal {
    final AtomicReference<IdempotentHttpClient> client = new AtomicReference<>();

    ShutdownAtBegin() {
      super(new InMemoryJournal());
    }

    @Override
    public BeginResult begin(NewOperation operation) throws IdempotencyException {
      BeginResult r = super.begin(operation);
      IdempotentHttpClient c = client.get();
      if (c != null) {
        c.shutdown();
      }
      return r;
    }
  }

  @Test
  void anAttemptRefusedBecauseOfTheShutdownLeavesTheOperationPending() throws Exception {
    IdempotentServer server = serverExtension.server();
    ShutdownAtBegin journal = new ShutdownAtBegin();
    Fixture f = new Fixture(b -> b.journal(journal).retryPolicy(RetryPolicy.builder().maxAttempts(1).build()),
        c -> { });
    // A client of its own: on Java 21+ shutdown() shuts the wrapped client down, and Fixture.JDK
    // is every other test's.
    HttpClient own = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    IdempotentHttpClient client = IdempotentHttpClient.builder(own).idempotentExecutor(f.executor).build();
    journal.client.set(client);
    OperationCall call = client.operation("create-order");
    OperationId id = call.operationId();
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
    try {
      f.await(future);
      fail("a call stopped by the shutdown completed normally");
    } catch (OperationPendingException expected) {
      assertEquals(id, expected.operationId());
    } catch (Exception other) {
      throw new AssertionError("expected OperationPendingException", other);
    }
    assertEquals(0, server.requestCount(), "nothing was sent after the shutdown");
    assertEquals(OperationState.PENDING, f.record(id).state());
    assertTrue(f.record(id).attempts().isEmpty(), "no attempt used up: " + f.record(id).attempts());
  }
}
