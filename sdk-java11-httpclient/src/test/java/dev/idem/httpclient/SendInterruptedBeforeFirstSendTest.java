package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotencyException;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.testkit.IdempotentServer;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: SyncDriver stops before a Send step on an interrupted thread.
 *
 * <p>A blocking {@code send} whose thread is interrupted (the app stops a worker) while the journal
 * writes the operation's first claim, before the first attempt is sent. The storage layer makes
 * that write durable whatever the interrupt and restores the flag, so the thread reaches the first
 * attempt already interrupted. The JDK's {@code HttpClient.send} then throws at once, without
 * beginning the exchange (no head composed, the body's length never asked). The client's docs say
 * an interrupted {@code send} ends "InterruptedException, the operation PENDING with its key", and
 * that an attempt is "not sent" until the client asks for its body's length.
 *
 * <p>But AttemptSender.send turns every InterruptedException into a plain InterruptedIOException
 * without consulting the body tracker, so the executor records an AMBIGUOUS attempt ("may have
 * taken effect") for a request that never left: a later permanent refusal of this operation (a 422)
 * then ends UNCERTAIN rather than FAILED. The OkHttp interceptor (ChainTransport) reports a call
 * canceled before its attempt as RequestNotSentException for the same reason.
 */
class SendInterruptedBeforeFirstSendTest {
  private final IdempotentServer server = IdempotentServer.start();

  /** Runs once, right after the next claim: the app interrupting the caller there. */
  private final AtomicReference<Runnable> onClaim = new AtomicReference<>();
  private final ForwardingJournal hooked = new ForwardingJournal(new InMemoryJournal()) {
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

  @AfterEach
  void stop() {
    server.close();
  }

  /** Sends {@code call} with its caller interrupted right after the journal claimed it. */
  private void sendInterruptedAtTheClaim(OperationCall call) {
    onClaim.set(() -> Thread.currentThread().interrupt());
    assertThrows(InterruptedException.class,
        () -> call.send(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString()));
    Thread.interrupted();
  }

  @Test
  void anInterruptBeforeTheFirstAttemptRecordsNoAttempt() throws Exception {
    Fixture g = new Fixture(b -> b.journal(hooked), c -> { });
    try {
      OperationCall call = g.client.operation("create-order");
      OperationId id = call.operationId();
      sendInterruptedAtTheClaim(call);

      OperationRecord record = g.record(id);
      assertEquals(0, server.requestCount(), "nothing reached the server");
      assertEquals(OperationState.PENDING, record.state());
      assertEquals(List.of(), record.attempts(), "the interrupted thread never began the request (the JDK refused"
          + " it before composing a head), yet the journal holds an attempt that may have taken effect");
    } finally {
      g.executor.close();
    }
  }

  @Test
  void aLaterPermanentRefusalOfThatNeverSentOperationIsFailedNotUncertain() throws Exception {
    Fixture g = new Fixture(b -> b.journal(hooked), c -> { });
    try {
      OperationCall call = g.client.operation("create-order");
      OperationId id = call.operationId();
      sendInterruptedAtTheClaim(call);

      // The app sends the same operation again later; the server refuses it for good (403).
      server.plan().next(dev.idem.testkit.Fault.status(403));
      try {
        call.send(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
      } catch (java.io.IOException reported) {
        // a FAILED or UNCERTAIN operation may be reported as an exception
      }
      assertEquals(1, server.requestCount(), "the one request ever sent with this key");
      assertEquals(OperationState.FAILED, g.record(id).state(), "the only request that reached the target was"
          + " refused for good, so nothing took effect; attempts: " + g.record(id).attempts());
    } finally {
      g.executor.close();
    }
  }
}
