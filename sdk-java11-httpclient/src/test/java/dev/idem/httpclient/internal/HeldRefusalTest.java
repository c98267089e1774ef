package dev.idem.httpclient.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.RequestNotSentException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * An asynchronous attempt asked for after the client's shutdown, before the shutdown reached its
 * call, is held until the shutdown's stop, so that it is recorded as the stopped call's (PENDING)
 * rather than as one not sent, to retry. A caller's cancel can take the call out of the shutdown's
 * reach first (its execution ends, and with it the call's place among those the shutdown stops):
 * then no stop comes, and the held attempt must end with the cancel, or the execution waits on it
 * for good, the operation IN_FLIGHT until its lease runs out.
 *
 * <p>Found reading a review's suspicion on 2026-12-05 (jdkhttp2).
 */
class HeldRefusalTest {
  @Test
  void aCancelEndsAnAttemptHeldForAShutdownsStop() {
    // Nothing of the sender, the request or the executor is reached before the hold.
    LiveTransport transport = new LiveTransport(null, null, new byte[0], null, () -> true);
    CompletableFuture<ResponseSnapshot> held = transport.sendAsync(null, null);
    assertFalse(held.isDone(), "held for the shutdown's stop");

    transport.cancel();

    assertTrue(held.isDone(), "the caller's cancel left the attempt held, waiting for a stop that will not come");
    ExecutionException e = assertThrows(ExecutionException.class, held::get);
    assertInstanceOf(RequestNotSentException.class, e.getCause());
  }
}
