package dev.idem.core.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A resume pass no longer ends while operations keep being enqueued (e02f249a).
 *
 * <p>Before e02f249a a pass ended at the first page shorter than its size: a startup resume of a
 * few due operations read one page and returned. Now it ends only at an EMPTY page
 * ({@code DuePages.read}: {@code allRead = read.isEmpty()}). A newly enqueued operation is PENDING
 * with no next attempt time, which the due rule ({@code DueRule.isDueFor}, the JDBC journal's
 * {@code DUE_NOW}) counts as due at the pass's own instant although it was begun after it, and
 * it sorts after the pass's cursor (its due time is its creation). So every page the pass reads
 * holds what the app enqueued while the previous page was resumed, and the pass never sees an
 * empty page while the app keeps enqueueing at any rate (one operation per page read here, on
 * any journal, with full pages too). {@code resumePending} at startup then does not return under
 * steady traffic: the app's startup resume does not return (a {@code close()} waits its whole grace for it), and the
 * pass does the dispatcher's work for operations it was never meant to resume.
 *
 * <p>Here the app enqueues one operation after each page read (a virtual second later), 300 in
 * all; the pass started with 3 due operations.
 */
class RvRtoday7ResumePassFollowsArrivalsTest {
  private static final int ARRIVALS = 300;

  /** Enqueues one operation through the executor after each read of the due pages, as a busy app does. */
  private static final class Arrivals extends ForwardingJournal {
    final AtomicReference<Harness> harness = new AtomicReference<>();
    final AtomicInteger enqueued = new AtomicInteger();
    final AtomicInteger reads = new AtomicInteger();

    Arrivals(InMemoryJournal delegate) {
      super(delegate);
    }

    @Override
    public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
        throws IdempotencyException {
      List<OperationRecord> page = super.findDue(now, owner, after, limit);
      reads.incrementAndGet();
      Harness h = harness.get();
      if (h != null && enqueued.get() < ARRIVALS) {
        h.time.advance(Duration.ofSeconds(1));
        h.executor.enqueue(order(1000 + enqueued.getAndIncrement()));
      }
      return page;
    }
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  @ParameterizedTest(name = "resumeConcurrency {0}")
  @ValueSource(ints = {1, 4})
  void aPassEndsWhileTheAppKeepsEnqueueing(int concurrency) throws Exception {
    Arrivals journal = new Arrivals(new InMemoryJournal());
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(concurrency));
    for (int i = 0; i < 3; i++) {
      h.executor.enqueue(order(i));
      h.time.advance(Duration.ofSeconds(1));
    }
    journal.harness.set(h);
    List<IdempotencyKey> sent = Collections.synchronizedList(new ArrayList<>());
    Transport transport = (request, key) -> {
      sent.add(key);
      return ScriptedTransport.response(201);
    };

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(transport, o -> { }, f -> { throw new AssertionError(f); })));

    assertTrue(journal.enqueued.get() < ARRIVALS,
        "the pass read on until the app stopped enqueueing (" + journal.reads.get() + " page reads, "
            + summary.examined() + " examined, " + sent.size() + " sent): under steady traffic it never ends; "
            + summary);
    assertEquals(3, summary.examined(), "the operations due when the pass started: " + summary);
  }
}
