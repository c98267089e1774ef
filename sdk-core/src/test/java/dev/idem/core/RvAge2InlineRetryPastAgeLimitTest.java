package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Review (rv-age2): KeyRetention's contract says an inline call (execute, executeAsync) that finds
 * its operation journaled already, unfinished, is subject to the age limit ("executing the same
 * Operation again is a resend as much as a resume is"). The executor checks the limit once, before it
 * leads (expiredOrAsIs), but the AttemptLoop it then runs is inline, so its ageLimit is null: neither
 * the retry scheduling (the "would fall at or past the age limit" rule) nor the claim before each
 * attempt (810d118c) applies. An app re-executing an operation just before its limit (a user
 * resubmitting, a batch job restarted) has its retries sent past the limit, with a key the server
 * may have forgotten: with maxPendingAge = serverKeyRetention (allowed), past the retention that
 * started at the operation's first, ambiguous attempt, where a resend can take effect twice.
 */
class RvAge2InlineRetryPastAgeLimitTest {
  private static final Duration RETENTION = Duration.ofHours(1);

  private Harness harness() {
    return new Harness(Harness.POLICY, b -> b.serverKeyRetention(RETENTION).maxPendingAge(RETENTION)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
  }

  /** op enqueued at the returned instant; its first attempt timed out (may have reached the server). */
  private Instant pendingWithAnAmbiguousAttempt(Harness h, Operation op) throws Exception {
    Instant created = h.time.now();
    h.executor.enqueue(op);
    FakeHost earlier = new FakeHost(h.time, (k, n, t) -> n == 1
        ? Reply.fail(new SocketTimeoutException("Read timed out"))
        : Reply.fail(new ConnectException("Connection refused")));
    assertThrows(OperationPendingException.class, () -> h.executor.resume(op.id(), earlier));
    assertTrue(h.record(op).attempts().stream().anyMatch(AttemptRecord::mayHaveReachedServer));
    // The app executes the same operation again one second before its age limit.
    h.time.advance(Duration.between(h.time.now(), created.plus(RETENTION)).minusSeconds(1));
    return created;
  }

  @Test
  void executeOfAnExistingOperationSendsNoRetryPastItsAgeLimit() throws Exception {
    Harness h = harness();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    Instant limit = pendingWithAnAmbiguousAttempt(h, op).plus(RETENTION);
    FakeHost host = new FakeHost(h.time, (k, n, t) -> {
      if (n == 1) {
        h.time.advance(Duration.ofSeconds(5));  // a slow 503: its answer comes past the age limit
        return Reply.status(503);
      }
      return Reply.status(201);
    });

    try {
      h.executor.execute(op, host);
    } catch (OperationException expected) {
      // ended at its age limit, or left for a deliverer: either is fine, as long as nothing went out past it
    }

    assertNothingSentPast(limit, host.sendTimes(), h.record(op));
  }

  @Test
  void executeAsyncOfAnExistingOperationSendsNoRetryPastItsAgeLimit() throws Exception {
    Harness h = harness();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    Instant limit = pendingWithAnAmbiguousAttempt(h, op).plus(RETENTION);
    FakeHost host = new FakeHost(h.time, (k, n, t) -> n == 1 ? Reply.status(503) : Reply.status(201))
        .latency(Duration.ofSeconds(5));

    CompletableFuture<Outcome> f = h.executor.executeAsync(op, host);
    h.time.runUntilIdle();
    assertTrue(f.isDone());

    assertNothingSentPast(limit, host.sendTimes(), h.record(op));
  }

  private static void assertNothingSentPast(Instant limit, List<Instant> sent, OperationRecord r) {
    assertTrue(sent.stream().allMatch(t -> t.isBefore(limit)),
        "an attempt was sent at or past the age limit " + limit + " (= the server's key retention since the"
            + " first, ambiguous attempt): sends at " + sent + "; the operation ended " + r.state() + " ("
            + r.reason() + ")");
  }
}
