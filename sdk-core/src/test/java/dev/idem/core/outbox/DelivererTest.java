package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.JournalException;
import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Outcome;
import dev.idem.core.outbox.Deliverer.Ending;
import dev.idem.core.spi.poll.PollLoop;
import dev.idem.core.support.FakeHost;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** The batch a poll takes from the journal, and how a delivery's ending is judged; fake time throughout. */
class DelivererTest {
  /** The journal no longer holds the operation. */
  private static final Predicate<OperationId> GONE = id -> true;
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));
  private final PollLoop backoff = PollLoop.builder(OutboxDispatcher.class, "test", () -> { })
      .clock(time.clock()).scheduler(time.scheduler()).interval(Duration.ofSeconds(1))
      .maxInterval(Duration.ofSeconds(60)).build();
  private final DeliveryTracker tracker = new DeliveryTracker(journal, time.clock(), 100, id -> false);
  private final List<Boolean> ended = new ArrayList<>();

  private Deliverer deliverer(Journal j, int maxInFlight, int pageSize) {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(j).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5).build();
    return new Deliverer(idem, time.clock(), Map.of("create-order", new Registration(host, null, null)),
        maxInFlight, pageSize, tracker, backoff, new DueDeadlines(j, time.clock(), time.scheduler(),
        Set.of("create-order"), pageSize), ended::add);
  }

  private static Operation op(String name, int n) {
    return Operation.builder(name, Requests.order("{\"n\":" + n + "}")).build();
  }

  private List<OperationId> enqueue(String name, int count) throws IdempotencyException {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock()).build();
    List<OperationId> ids = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ids.add(idem.enqueue(op(name, i)).id());
    }
    return ids;
  }

  private static List<OperationId> ids(List<OperationRecord> records) {
    return records.stream().map(OperationRecord::id).toList();
  }

  @Test
  void theBatchPagesThroughTheJournalAndTakesOnlyRegisteredNames() throws Exception {
    List<OperationId> orders = enqueue("create-order", 7);
    enqueue("refund", 5);

    List<OperationRecord> batch = deliverer(journal, 32, 3).findBatch();

    assertEquals(orders.size(), batch.size());
    assertTrue(ids(batch).containsAll(orders));
  }

  @Test
  void theBatchStopsAtTheRoomLeftAndSkipsOperationsInDelivery() throws Exception {
    List<OperationId> orders = enqueue("create-order", 10);
    DeliveryTracker.Round round = new DeliveryTracker.Round(2);
    tracker.start(orders.get(0), round);
    tracker.start(orders.get(1), round);

    List<OperationRecord> batch = deliverer(journal, 5, 4).findBatch();

    assertEquals(3, batch.size(), "5 in flight at most, 2 already are");
    assertFalse(ids(batch).contains(orders.get(0)));
    assertFalse(ids(batch).contains(orders.get(1)));
  }

  @Test
  void noRoomMeansTheJournalIsNotEvenRead() throws Exception {
    enqueue("create-order", 1);
    tracker.start(op("create-order", 99).id(), new DeliveryTracker.Round(1));
    ForwardingJournal unreadable = new ForwardingJournal(journal) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
          int limit) throws IdempotencyException {
        throw new AssertionError("not read");
      }
    };

    assertEquals(List.of(), deliverer(unreadable, 1, 10).findBatch());
  }

  @Test
  void anUnreadableJournalIsAPollWithoutProgress() {
    ForwardingJournal broken = new ForwardingJournal(journal) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
          int limit) throws IdempotencyException {
        throw new JournalException("disk gone", null);
      }
    };

    assertFalse(deliverer(broken, 32, 10).deliverDue());
    assertTrue(backoff.isOffline());
    assertEquals(Duration.ofSeconds(2), backoff.interval());
  }

  /**
   * The journal took the dispatcher offline while every slot under maxInFlight is taken (deliveries
   * waiting between attempts count): a poll with no room reads nothing, so it cannot say that the
   * journal can be read again. It brought the dispatcher back online, reporting isOffline() false
   * and waking a poll per submission, while the database was still down.
   */
  @Test
  void aPollWithNoRoomLeavesTheDispatcherOfflineForAJournalItDidNotRead() {
    ForwardingJournal broken = new ForwardingJournal(journal) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
          int limit) throws IdempotencyException {
        throw new JournalException("connection refused", null);
      }
    };
    Deliverer d = deliverer(broken, 2, 10);
    tracker.start(op("create-order", 99).id(), new DeliveryTracker.Round(1));  // waiting for its next attempt
    assertFalse(d.deliverDue(), "a slot was free: the journal was read, and failed");
    assertTrue(backoff.isOffline());

    tracker.start(op("create-order", 98).id(), new DeliveryTracker.Round(1));  // no slot free
    d.deliverDue();

    assertTrue(backoff.isOffline(), "the journal cannot be read, and this poll did not read it");
    assertEquals(Duration.ofSeconds(2), backoff.interval());
  }

  @Test
  void aDeliveredRoundEndsEachDeliveryAndReportsProgress() throws Exception {
    enqueue("create-order", 3);
    Deliverer d = deliverer(journal, 32, 10);

    assertTrue(d.deliverDue());
    time.advance(Duration.ZERO);

    assertEquals(List.of(true, true, true), ended);
    assertEquals(0, tracker.inDelivery());
    assertEquals(3, host.effects());
  }

  @Test
  void endingsThatSettleTheOperation() {
    OperationId id = op("create-order", 1).id();
    Outcome outcome = new Outcome(id, FakeHost.response(201, Map.of()), false, false, List.of());
    OperationFailedException rejected = new OperationFailedException("422", null, id, List.of(),
        FakeHost.response(422, Map.of()));
    OperationFailedException notSent = new OperationFailedException("refused", null, id, List.of(), null);
    OperationUncertainException uncertain = new OperationUncertainException("?", null, id, List.of(), null);
    IdempotencyKeyReusedException reused = new IdempotencyKeyReusedException(id, true, "reused");

    assertEnding(Ending.of(outcome, null, GONE, id), true, true);
    assertEnding(Ending.of(null, rejected, GONE, id), true, true);
    assertEnding(Ending.of(null, notSent, GONE, id), true, false);
    assertEnding(Ending.of(null, uncertain, GONE, id), true, false);
    assertEnding(Ending.of(null, reused, GONE, id), true, true);
    assertEnding(Ending.of(null, new IllegalArgumentException("no such operation"), GONE, id), true, false);
  }

  /** The app's own IllegalArgumentException (a delay function's, say) says nothing of the operation's end. */
  @Test
  void anIllegalArgumentFromElsewhereLeavesTheOperationAsTheJournalHoldsIt() {
    OperationId id = op("create-order", 1).id();

    Ending e = Ending.of(null, new NumberFormatException("For input string: \"1.5\""), gone -> false, id);

    assertEnding(e, false, false);
    assertTrue(e.withoutVerdict());
  }

  @Test
  void endingsThatLeaveItPending() {
    OperationId id = op("create-order", 1).id();
    Ending pending = Ending.of(null, new OperationPendingException("later", null, id, List.of(), null), GONE, id);
    Ending cancelled = Ending.of(null, new CancellationException(), GONE, id);
    Ending journalDown = Ending.of(null, new JournalException("disk gone", null), GONE, id);

    assertEnding(pending, false, false);
    assertEnding(cancelled, false, false);
    assertEnding(journalDown, false, false);
    assertFalse(pending.withoutVerdict(), "expected: it waits for its next attempt");
    assertFalse(cancelled.withoutVerdict(), "expected: close cancelled it");
    assertTrue(journalDown.withoutVerdict());
  }

  @Test
  void theCauseIsUnwrapped() {
    OperationId id = op("create-order", 1).id();
    OperationUncertainException uncertain = new OperationUncertainException("?", null, id, List.of(), null);

    Ending e = Ending.of(null, new CompletionException(new CompletionException(uncertain)), GONE, id);

    assertSame(uncertain, e.cause());
    assertTrue(e.terminal());
  }

  @Test
  void theWarnOfARoundWithoutProgressSaysWhatBecameOfItsOperationsAndNoMore() {
    OperationId id = op("create-order", 1).id();
    Ending pending = Ending.of(null, new OperationPendingException("not sent", null, id, List.of(), null), GONE, id);
    Ending uncertain = Ending.of(null, new OperationUncertainException("?", null, id, List.of(), null), GONE, id);
    Ending failed = Ending.of(null, new OperationFailedException("age limit", null, id, List.of(), null), GONE, id);

    DeliveryTracker.Round offline = new DeliveryTracker.Round(2);
    offline.count(pending);
    offline.count(pending);
    String all = offline.describe();
    assertTrue(all.contains("of 2 operations, 2 stay PENDING with their keys"), all);
    assertFalse(all.contains("UNCERTAIN") || all.contains("FAILED"), all);

    // The reported case: an operation ended while the WARN said they all stay PENDING.
    DeliveryTracker.Round mixed = new DeliveryTracker.Round(3);
    mixed.count(pending);
    mixed.count(uncertain);
    mixed.count(failed);
    String some = mixed.describe();
    assertTrue(some.contains("of 3 operations, 1 stay PENDING"), some);
    assertTrue(some.contains("1 ended UNCERTAIN"), some);
    assertTrue(some.contains("1 ended FAILED"), some);
  }

  @Test
  void aRoundOfRefusedAttemptsTakesTheDispatcherOfflineWithEveryOperationPending() throws Exception {
    host.behave((key, n, now) -> FakeHost.Reply.fail(new java.net.ConnectException("Connection refused")));
    List<OperationId> ids = enqueue("create-order", 3);
    Deliverer d = deliverer(journal, 32, 10);

    assertTrue(d.deliverDue());
    time.advance(Duration.ofSeconds(10));

    assertTrue(backoff.isOffline(), "no progress: the dispatcher backs off as a whole");
    assertEquals(List.of(false, false, false), ended);
    for (OperationId id : ids) {
      assertEquals(dev.idem.core.OperationState.PENDING, journal.find(id).orElseThrow().state(), "as the WARN says");
    }
  }

  private static void assertEnding(Ending e, boolean terminal, boolean progress) {
    assertEquals(terminal, e.terminal(), "terminal: " + e.cause());
    assertEquals(progress, e.progress(), "progress: " + e.cause());
  }
}
