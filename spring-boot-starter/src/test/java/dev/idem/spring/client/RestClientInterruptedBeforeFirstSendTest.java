package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

/**
 * Regression test for a defect found by review, described as it was; fixed: SyncDriver stops before a Send step on an interrupted thread.
 *
 * <p>A keyed RestClient call (on Boot's default factory, JdkClientHttpRequestFactory) whose thread is
 * interrupted while the journal writes the first claim: the thread reaches the first attempt
 * interrupted, and the JDK's {@code HttpClient.send} refuses to begin an exchange on an interrupted
 * thread (checked on JDK 17 and 25: no head composed, no byte sent). Spring reports that as an
 * IOException ("Request was interrupted"), the executor sees the thread interrupted and records
 * the attempt as AMBIGUOUS, although nothing left the process: a later permanent refusal of the
 * operation then ends UNCERTAIN instead of FAILED. Nothing checks the interrupt before the attempt
 * is handed to the client (SyncDriver.drive, LiveAttempts.send), as ChainTransport checks an OkHttp
 * call's cancel.
 */
class RestClientInterruptedBeforeFirstSendTest {
  private final IdempotentServer server = IdempotentServer.start();
  private final AtomicReference<Runnable> onClaim = new AtomicReference<>();
  private final ForwardingJournal journal = new ForwardingJournal(new InMemoryJournal()) {
    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      Optional<Lease> lease = super.claim(id, owner, now, leaseFor);
      Runnable hook = onClaim.getAndSet(null);
      if (hook != null) {
        hook.run();
      }
      return lease;
    }
  };
  private final IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();

  @AfterEach
  void stop() {
    executor.close();
    server.close();
  }

  @Test
  void anInterruptBeforeTheFirstAttemptRecordsNoAttemptAndALater403IsFailed() throws Exception {
    RestClient client = RestClient.builder()
        .requestFactory(new JdkClientHttpRequestFactory(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .build()))
        .requestInterceptor(IdempotencyInterceptor.builder(executor).build()).build();
    IdempotentCall call = IdempotentCall.named("create-order");

    onClaim.set(() -> Thread.currentThread().interrupt()); // the app interrupts the caller here
    assertThrows(RuntimeException.class, () -> client.post().uri(server.url("/orders"))
        .contentType(MediaType.APPLICATION_JSON).attributes(call).body("{\"qty\":1}").retrieve().toBodilessEntity());
    Thread.interrupted();
    assertEquals(0, server.requestCount(), "nothing reached the server");
    OperationId id = new OperationId("default", "create-order", call.key().orElseThrow());
    OperationRecord record = journal.find(id).orElseThrow();
    List<?> attempts = record.attempts();

    // The same operation later; the server refuses it for good.
    server.plan().next(Fault.status(403));
    try {
      client.post().uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON).attributes(call)
          .body("{\"qty\":1}").retrieve().toBodilessEntity();
    } catch (RuntimeException reported) {
      // a FAILED or UNCERTAIN operation is reported as an exception
    }
    assertEquals(1, server.requestCount(), "the one request ever sent with this key");
    assertEquals(List.of(), attempts, "the interrupted call sent nothing, yet the journal records an attempt that"
        + " may have taken effect");
    assertEquals(OperationState.FAILED, journal.find(id).orElseThrow().state(), "the only request that reached the"
        + " target was refused for good: " + journal.find(id).orElseThrow().attempts());
  }
}
