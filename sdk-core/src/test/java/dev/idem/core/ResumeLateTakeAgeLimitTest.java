package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Why: a concurrent resume pass claims due operations a batch at a time and checked the age limit
 * only when it claimed them. A lane takes an operation of the batch later, once a lane is free;
 * when the other lanes' sends were slow, the operation could pass its age limit meanwhile, and the
 * pass still sent it with its key, which the server may have forgotten by then (a resend after
 * the key's retention can take effect twice). Now the age limit is checked again when a lane takes
 * the operation: past it, the operation ends as at any age limit (UNCERTAIN if an attempt may have
 * reached the server, else FAILED), under the batch's claim, with nothing sent.
 */
class ResumeLateTakeAgeLimitTest {
  private static final Duration AGE_LIMIT = Duration.ofHours(1);
  /** How long the first two sends take, in virtual time: they cross the later operations' age limit. */
  private static final Duration SLOW_SEND = Duration.ofSeconds(5);

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  @Test
  void anOperationTakenFromItsBatchPastItsAgeLimitIsEndedUnsentUnderTheBatchsClaimAndItsHandlerTold()
      throws Exception {
    lateTakesPastTheAgeLimit(false);
  }

  /**
   * The batch's claim missed d (on PostgreSQL its row was locked at that moment, say): the lane
   * that takes it past its age limit claims it to end it, rather than to send it.
   */
  @Test
  void anOperationWhoseBatchClaimMissedItIsEndedUnsentToo() throws Exception {
    lateTakesPastTheAgeLimit(true);
  }

  private void lateTakesPastTheAgeLimit(boolean batchMissesD) throws Exception {
    Operation a = order(1);
    Operation b = order(2);
    Operation c = order(3);
    Operation d = order(4);  // never sent
    AtomicInteger missed = new AtomicInteger();
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
          Duration leaseFor) throws IdempotencyException {
        List<Optional<Lease>> leases = new ArrayList<>();
        for (OperationRecord r : asRead) {
          boolean miss = batchMissesD && r.id().equals(d.id());
          if (miss) {
            missed.incrementAndGet();
          }
          leases.add(miss ? Optional.empty() : claim(r.id(), owner, now, leaseFor));
        }
        return leases;
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, builder -> builder.resumeConcurrency(2)
        .maxPendingAge(AGE_LIMIT).circuitBreaker(CircuitBreakerSettings.disabled()));
    Instant created = h.time.now();
    h.executor.enqueue(a);
    h.executor.enqueue(b);
    h.executor.enqueue(c);
    // c's first attempt went out and its answer was lost; then the target refused it: PENDING, with
    // an attempt that may have reached the server.
    FakeHost earlier = new FakeHost(h.time, (k, n, t) -> n == 1 ? Reply.fail(new SocketTimeoutException("Read timed out"))
        : Reply.fail(new ConnectException("Connection refused")));
    assertThrows(OperationPendingException.class, () -> h.executor.resume(c.id(), earlier));
    List<AttemptRecord> cAttempts = h.record(c).attempts();
    assertTrue(cAttempts.stream().anyMatch(AttemptRecord::mayHaveReachedServer), cAttempts.toString());
    h.time.advance(Duration.ofSeconds(1));
    h.executor.enqueue(d);
    // Due order: a and b (due at their creation), then d, then c (due after its refusal): the pass
    // claims [a, b], and, when a lane takes the second of them, [d, c].

    // The pass runs just before a, b and c reach their age limit (d a second later); the sends of a
    // and b, in flight together on both lanes, take SLOW_SEND, past every limit.
    h.time.advance(Duration.between(h.time.now(), created.plus(AGE_LIMIT)).minusSeconds(1));
    CountDownLatch bothOnTheWire = new CountDownLatch(2);
    CountDownLatch slowSendsOver = new CountDownLatch(1);
    AtomicInteger sends = new AtomicInteger();
    FakeHost host = new FakeHost(h.time, FakeHost.always(201));
    List<IdempotencyKey> sentKeys = Collections.synchronizedList(new ArrayList<>());
    Transport slowFirst = (RequestSnapshot request, IdempotencyKey key) -> {
      sentKeys.add(key);
      int n = sends.incrementAndGet();
      if (n <= 2) {
        bothOnTheWire.countDown();
        await(bothOnTheWire);
        if (n == 2) {
          h.time.advance(SLOW_SEND);  // on the lane that came second, once both are on the wire
          slowSendsOver.countDown();
        }
        await(slowSendsOver);
      }
      return host.send(request, key);
    };
    List<Outcome> succeeded = Collections.synchronizedList(new ArrayList<>());
    List<OperationException> failed = Collections.synchronizedList(new ArrayList<>());

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(slowFirst, succeeded::add, failed::add)));

    assertEquals(2, sentKeys.size(), "sends: " + sentKeys);
    assertEquals(Set.of(a.key(), b.key()), Set.copyOf(sentKeys), "only a and b were sent");
    assertEquals(0, host.attempts(c.key()), "c was not sent past its age limit");
    assertEquals(0, host.attempts(d.key()), "d was not sent past its age limit");
    assertEquals(2, host.effects());
    assertEquals(batchMissesD ? 1 : 0, missed.get());
    assertEquals(new ResumeSummary(4, 2, 1, 1, 0, 2, 0, 0), summary);

    assertEquals(OperationState.SUCCEEDED, h.state(a));
    assertEquals(OperationState.SUCCEEDED, h.state(b));
    OperationRecord cNow = h.record(c);
    assertEquals(OperationState.UNCERTAIN, cNow.state(), cNow.reason());
    assertTrue(cNow.reason().contains("age limit") && cNow.reason().contains("may have reached the server"),
        cNow.reason());
    assertEquals(cAttempts, cNow.attempts(), "no attempt recorded for c in the pass");
    OperationRecord dNow = h.record(d);
    assertEquals(OperationState.FAILED, dNow.state(), dNow.reason());
    assertTrue(dNow.reason().contains("age limit") && dNow.reason().contains("no attempt can have reached"),
        dNow.reason());
    assertEquals(List.of(), dNow.attempts(), "no attempt recorded for d");
    assertEquals(0, h.executor.journal().count(OperationState.IN_FLIGHT), "the batch's claims were consumed");
    assertEquals(0, h.executor.journal().count(OperationState.PENDING));

    assertEquals(2, succeeded.size());
    assertEquals(2, failed.size(), failed.toString());
    OperationException toldC = failed.stream().filter(f -> f.operationId().equals(c.id())).findFirst().orElseThrow();
    OperationException toldD = failed.stream().filter(f -> f.operationId().equals(d.id())).findFirst().orElseThrow();
    assertInstanceOf(OperationUncertainException.class, toldC);
    assertInstanceOf(OperationFailedException.class, toldD);
    // Their outcomes were recorded as delivered: the next pass hands nothing over again.
    ResumeSummary next = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(host, o -> { throw new AssertionError(o); }, f -> { throw new AssertionError(f); })));
    assertEquals(0, next.examined(), next.toString());

    // The pass left each flight: an operator's re-drive of d (never sent: it begins anew) is sent
    // by the next call, which would otherwise wait for a leader that never ends.
    h.executor.redrive(d.id());
    Outcome resent = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> h.executor.resume(d.id(), host));
    assertEquals(d.key(), resent.key());
    assertEquals(1, host.attempts(d.key()));
  }

  private static void await(CountDownLatch latch) throws IOException {
    try {
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new AssertionError("the other lane's send never started");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException();
    }
  }
}
