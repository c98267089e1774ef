package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An enqueued {@link IdemOkHttp#callFactory} call cancelled by another thread (the app's UI, or
 * OkHttp's call-timeout watchdog) while {@code enqueue} is still inside {@code executeAsync}: the
 * journal's begin and first claim are done, the first attempt is not sent yet. Nothing goes out,
 * but the journal must then not record an attempt that may have taken effect: the class comment of
 * AsyncDriver promises "no attempt is recorded that was not sent", and such a phantom AMBIGUOUS
 * attempt turns a later permanent refusal (a 422) into UNCERTAIN.
 *
 * <p>Deterministic: the concurrent cancel is made by the journal's claim itself, which is exactly
 * the window where another thread's cancel lands when the journal is slow (an fsync).
 */
class AsyncReviewCancelBeforeFirstSendTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  /** The fixture's journal; runs {@link #onClaim} once, right after the first claim. */
  final class CancelAtClaim extends ForwardingJournal {
    final AtomicReference<Runnable> onClaim = new AtomicReference<>();

    CancelAtClaim() {
      super(f.journal);
    }

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
  }

  @Test
  void aCancelBeforeTheFirstAttemptIsSentRecordsNoAttempt() throws Exception {
    IdempotentServer server = serverExtension.server();
    CancelAtClaim journal = new CancelAtClaim();
    IdempotentExecutor executor = f.executorBuilder().journal(journal).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = Fixture.client(idem);
    Call.Factory calls = idem.callFactory(client);
    IdempotentOperation op = IdempotentOperation.of("create-order");

    Call call = calls.newCall(order(server.url("/orders"), op));
    journal.onClaim.set(call::cancel);
    CallFactoryTest.Result result = new CallFactoryTest.Result();
    call.enqueue(result);

    Exception failure = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, result::get);
    assertInstanceOf(IOException.class, failure.getCause(), "the callback hears of the cancel");
    assertEquals(0, server.recordedRequests().size(), "nothing was sent");

    OperationRecord record = f.record(op);
    assertEquals(OperationState.PENDING, record.state());
    assertEquals(0, record.attempts().size(),
        "no request went out, yet the journal records an attempt: " + record.attempts());
  }

  @Test
  void aLaterPermanentRefusalOfThatNeverSentOperationIsFailedNotUncertain() throws Exception {
    IdempotentServer server = serverExtension.server();
    CancelAtClaim journal = new CancelAtClaim();
    IdempotentExecutor executor = f.executorBuilder().journal(journal).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = Fixture.client(idem);
    IdempotentOperation op = IdempotentOperation.of("create-order");

    Call call = idem.callFactory(client).newCall(order(server.url("/orders"), op));
    journal.onClaim.set(call::cancel);
    CallFactoryTest.Result result = new CallFactoryTest.Result();
    call.enqueue(result);
    org.junit.jupiter.api.Assertions.assertThrows(Exception.class, result::get);
    assertEquals(0, server.recordedRequests().size(), "nothing was sent");

    // The app executes the operation again later; the server refuses it for good (403).
    server.plan().next(dev.idem.testkit.Fault.status(403));
    try (okhttp3.Response r = client.newCall(order(server.url("/orders"), op)).execute()) {
      // whatever the adapter hands back
    } catch (IOException expected) {
      // a FAILED or UNCERTAIN operation may be reported as an exception
    }
    assertEquals(1, server.recordedRequests().size(), "the one request ever sent with this key");
    assertEquals(OperationState.FAILED, f.record(op).state(),
        "the only request that reached the target was refused for good, so nothing took effect;"
            + " attempts: " + f.record(op).attempts());
  }
}
