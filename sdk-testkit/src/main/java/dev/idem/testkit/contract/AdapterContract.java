package dev.idem.testkit.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Outcome;
import dev.idem.core.RetryPolicy;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.http.UntaggedRequestException;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import dev.idem.testkit.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.testkit.contract.AdapterDriver.Call;
import dev.idem.testkit.contract.AdapterDriver.Session;
import dev.idem.testkit.contract.AdapterDriver.Setup;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every Idem HTTP adapter shares, as JUnit 5 tests. Extend it once per adapter and
 * calling style and return the driver:
 *
 * <pre>{@code
 * class OkHttpExecuteContractTest extends AdapterContract {
 *   protected AdapterDriver driver() { return new OkHttpDriver(OkHttpDriver.Style.EXECUTE); }
 * }
 * }</pre>
 *
 * Each scenario starts a fresh reference server (port 0), an in-memory journal and virtual time,
 * and asserts what happened at the server per key (effects, requests, the key on every attempt)
 * and in the journal, not only the status the app saw. The rules checked are those of
 * {@link AdapterSupport}.
 */
public abstract class AdapterContract {
  /** The body most scenarios send. */
  protected static final String ORDER = "{\"qty\":1}";

  private final List<AutoCloseable> closeLater = new ArrayList<>();
  /** The scenario's virtual time: backoff never really sleeps. */
  protected VirtualTime time;
  /** The scenario's journal. */
  protected InMemoryJournal journal;
  /** The scenario's reference server. */
  protected IdempotentServer server;

  /** Creates the contract; subclasses provide the driver. */
  protected AdapterContract() {}

  /**
   * The adapter and calling style under test.
   *
   * @return the driver
   */
  protected abstract AdapterDriver driver();

  /** Starts the scenario's server, journal and time. */
  @BeforeEach
  void startWorld() {
    time = new VirtualTime();
    journal = new InMemoryJournal();
    server = IdempotentServer.start();
  }

  /**
   * Stops what the scenario started: everything registered to close later, in order, then the
   * server, each even if closing an earlier one threw.
   *
   * @throws Exception the first failure to close, with any later ones suppressed in it
   */
  @AfterEach
  void stopWorld() throws Exception {
    Exception failure = null;
    try {
      for (AutoCloseable c : closeLater) {
        try {
          c.close();
        } catch (Exception e) {
          failure = firstOf(failure, e);
        }
      }
    } finally {
      try {
        server.close();
      } catch (RuntimeException e) {
        failure = firstOf(failure, e);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private static Exception firstOf(Exception first, Exception next) {
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }

  /** Closes {@code c} when the scenario ends, before the server. */
  void closeLater(AutoCloseable c) {
    closeLater.add(c);
  }

  // ---------------------------------------------------------------- the happy path and retries

  @Test
  void success() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    AdapterDriver.Reply r = session().send(call("create-order", key));
    assertEquals(201, r.status());
    assertEquals(Optional.of(OperationState.SUCCEEDED), r.state());
    assertFalse(r.replayed());
    assertSucceededOnce("create-order", key, 1);
  }

  @Test
  void serverReplayIsReportedAsAReplay() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    session().send(call("create-order", key));
    // Another process (its own journal) sends the same operation: the server answers from its store.
    AdapterDriver.Reply r = session(new InMemoryJournal(), b -> { }).send(call("create-order", key));
    assertEquals(201, r.status());
    assertTrue(r.replayed(), "the server marked it as a replay");
    assertEquals(1, server.effectCount(key.value()));
    assertKeyOnEveryRequest(key, 2);
  }

  @Test
  void fiveHundredsThenSuccessKeepTheKeyOnEveryAttempt() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    server.plan().forNext(2, Fault.status(503));
    AdapterDriver.Reply r = session().send(call("create-order", key));
    assertEquals(201, r.status());
    assertSucceededOnce("create-order", key, 3);
  }

  @Test
  void responseLostAfterCommitIsRetriedAndReplayed() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    server.plan().next(Fault.commitThenDropResponse());
    AdapterDriver.Reply r = session().send(call("create-order", key));
    assertEquals(201, r.status());
    assertTrue(r.replayed());
    assertSucceededOnce("create-order", key, 2);
  }

  @Test
  void responseLostOnTheLastAttemptIsUncertainNeverFailed() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    server.plan().next(Fault.commitThenDropResponse());
    Session s = session(journal, b -> b.retryPolicy(RetryPolicy.builder().maxAttempts(1).build()));
    assertThrows(OperationUncertainException.class, () -> s.send(call("create-order", key)));
    assertEquals(1, server.effectCount(key.value()), "the effect exists");
    assertKeyOnEveryRequest(key, 1);
    OperationRecord rec = record("create-order", key);
    assertEquals(OperationState.UNCERTAIN, rec.state());
    assertEquals(1, rec.attempts().size());
  }

  // ---------------------------------------------------------------- endings

  @Test
  void permanent4xxIsFailedAndAnsweredWithTheResponse() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    server.plan().next(Fault.status(404));
    AdapterDriver.Reply r = session().send(call("create-order", key));
    assertEquals(404, r.status(), "returned as the HTTP client would have");
    assertEquals(Optional.of(OperationState.FAILED), r.state());
    assertEquals(0, server.effectCount(key.value()));
    assertKeyOnEveryRequest(key, 1);
    assertEquals(OperationState.FAILED, record("create-order", key).state());
  }

  @Test
  void keyMissingThrowsOperationFailed() throws Exception {
    // The client writes its key under a name the server does not know; the server says so.
    IdempotencyKey key = IdempotencyKey.generate();
    Session s = session(executor(journal, b -> { }), "X-Wrong-Key", UntaggedPolicy.PASS_THROUGH);
    OperationFailedException e = assertThrows(OperationFailedException.class, () -> s.send(call("create-order", key)));
    assertEquals(400, e.lastResponse().orElseThrow().status());
    assertEquals(1, server.requestCount(), "a configuration error is not retried");
    assertEquals(OperationState.FAILED, record("create-order", key).state());
  }

  @Test
  void a400ThatDoesNotSpeakOfIdempotencyIsTheAppsAnswerEvenIfItNamesTheKeyHeader() throws Exception {
    // One rule for "key missing", the executor's: a validation answer is returned, not thrown.
    try (IdempotentServer custom = IdempotentServer.builder().keyHeader("X-Request-Key")
        .handler(req -> Reply.json(400, "{\"error\":\"qty too large\",\"X-Request-Key\":\"see docs\"}")).start()) {
      IdempotencyKey key = IdempotencyKey.generate();
      Session s = session(executor(journal, b -> { }), "X-Request-Key", UntaggedPolicy.PASS_THROUGH);
      AdapterDriver.Reply r = s.send(new Call(custom.url("/orders"), "create-order", key, ORDER, Map.of()));
      assertEquals(400, r.status());
      assertEquals(Optional.of(OperationState.FAILED), r.state());
      assertEquals(1, custom.effectCount(key.value()));
    }
  }

  @Test
  void keyReusedWithAnotherBodyThrows() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    session().send(call("create-order", key));
    // Another process (its own journal) sends a different body under the same key: the server says 422.
    Session other = session(new InMemoryJournal(), b -> { });
    assertThrows(IdempotencyKeyReusedException.class,
        () -> other.send(new Call(server.url("/orders"), "create-order", key, "{\"qty\":2}", Map.of())));
    assertEquals(1, server.effectCount(key.value()));
    assertKeyOnEveryRequest(key, 2);
  }

  // ---------------------------------------------------------------- untagged requests

  @Test
  void untaggedPassThroughSendsNoKeyAndJournalsNothing() throws Exception {
    AdapterDriver.Reply r = session(UntaggedPolicy.PASS_THROUGH).send(call(null, null));
    assertEquals(Optional.empty(), r.state());
    assertEquals(Optional.empty(), server.recordedRequests().get(0).keyHeader());
    assertEquals(1, server.requestCount());
    assertTrue(allRecords().isEmpty());
  }

  @Test
  void untaggedFreshKeyIsNamedUntaggedPostInEveryAdapter() throws Exception {
    server.plan().next(Fault.status(503));
    AdapterDriver.Reply r = session(UntaggedPolicy.FRESH_KEY).send(call(null, null));
    assertEquals(201, r.status());
    OperationId id = r.operationId().orElseThrow();
    assertEquals("untagged-post", id.operation());
    assertEquals(AdapterSupport.untaggedName("POST"), id.operation());
    assertSucceededOnce("untagged-post", id.key(), 2);
  }

  @Test
  void untaggedRejectThrowsUntaggedRequestException() throws Exception {
    Session s = session(UntaggedPolicy.REJECT);
    assertThrows(UntaggedRequestException.class, () -> s.send(call(null, null)));
    assertEquals(0, server.requestCount(), "nothing was sent");
    assertTrue(allRecords().isEmpty(), "nothing was journaled");
  }

  // ---------------------------------------------------------------- a key header already on the request

  @Test
  void keyHeaderOnAnUntaggedRequestIsItsKey() throws Exception {
    AdapterDriver.Reply r = session(UntaggedPolicy.FRESH_KEY)
        .send(new Call(server.url("/orders"), null, null, ORDER, Map.of("Idempotency-Key", "app-key-1")));
    assertEquals(201, r.status());
    assertEquals("app-key-1", r.operationId().orElseThrow().key().value());
    assertKeyOnEveryRequest(IdempotencyKey.of("app-key-1"), 1);
    assertEquals(OperationState.SUCCEEDED, record("untagged-post", IdempotencyKey.of("app-key-1")).state());
  }

  @Test
  void keyHeaderOnANamedRequestWithoutAKeyOfItsOwnIsItsKey() throws Exception {
    server.plan().next(Fault.status(503));
    AdapterDriver.Reply r = session()
        .send(new Call(server.url("/orders"), "create-order", null, ORDER, Map.of("Idempotency-Key", "app-key-2")));
    assertEquals(201, r.status());
    assertEquals("app-key-2", r.operationId().orElseThrow().key().value());
    assertSucceededOnce("create-order", IdempotencyKey.of("app-key-2"), 2);
  }

  @Test
  void keyHeaderThatContradictsTheOperationsKeyIsRefusedBeforeSending() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    Session s = session();
    IdempotencyException e = assertThrows(IdempotencyException.class,
        () -> s.send(new Call(server.url("/orders"), "create-order", key, ORDER, Map.of("Idempotency-Key", "other"))));
    assertTrue(e.getMessage().contains("differ"), e.getMessage());
    assertEquals(0, server.requestCount());
    assertTrue(allRecords().isEmpty());
  }

  // ---------------------------------------------------------------- the replay header

  @Test
  void replayHeaderIsTheExecutorsOnSuccessAndOnFailure() throws Exception {
    Session s = session(journal, b -> b.replayHeader("X-Replayed"));
    IdempotencyKey failed = IdempotencyKey.generate();
    server.plan().next(Fault.status(404).withHeader("X-Replayed", "true"));
    AdapterDriver.Reply r = s.send(call("create-order", failed));
    assertEquals(404, r.status());
    assertTrue(r.replayed(), "the configured header marks a FAILED answer as a replay too");

    IdempotencyKey ok = IdempotencyKey.generate();
    server.plan().next(Fault.commitThenDropResponse());
    AdapterDriver.Reply replayed = s.send(call("create-order", ok));
    assertEquals(201, replayed.status());
    assertFalse(replayed.replayed(), "the server's Idempotent-Replayed is not the configured header");
    assertEquals(1, server.effectCount(ok.value()));
  }

  // ---------------------------------------------------------------- every request on the wire is a journaled attempt

  @Test
  void a503WithRetryAfterZeroIsRetriedAsAJournaledAttemptNotByTheHttpClient() throws Exception {
    // OkHttp repeats a request answered 503 with Retry-After: 0 on its own, below Idem.
    IdempotencyKey key = IdempotencyKey.generate();
    server.plan().next(Fault.status(503).withHeader("Retry-After", "0"));
    AdapterDriver.Reply r = session().send(call("create-order", key));
    assertEquals(201, r.status());
    assertSucceededOnce("create-order", key, 2);
    assertEquals(Optional.of(503), record("create-order", key).attempts().get(0).statusCode());
  }

  @Test
  void aRedirectToRepeatAKeyedPostIsItsAnswerNotFollowed() throws Exception {
    // 307 and 308 ask for the same POST again elsewhere: the server did not act on it. Following it
    // would put a request on the wire that the journal never saw, to a URL it does not hold.
    for (int status : new int[] {307, 308}) {
      IdempotencyKey key = IdempotencyKey.generate();
      server.plan().next(Fault.redirect(status, "/moved"));
      AdapterDriver.Reply r = session().send(call("create-order", key));
      assertEquals(status, r.status(), "the caller gets the redirect");
      assertEquals(Optional.of("/moved"), r.header("Location"), "with its Location");
      assertEquals(Optional.of(OperationState.FAILED), r.state());
      assertEquals(1, requestsWith(key), "one request with the key");
      assertEquals(0, requestsTo("/moved"), "the redirect was not followed");
      assertEquals(0, server.effectCount(key.value()));
      OperationRecord rec = record("create-order", key);
      assertEquals(OperationState.FAILED, rec.state());
      assertEquals(1, rec.attempts().size());
      assertEquals(Optional.of(status), rec.attempts().get(0).statusCode());
    }
  }

  @Test
  void aSeeOtherAfterTheEffectIsNeverFailedAndNeverFollowed() throws Exception {
    // Post/Redirect/Get: the server processed the POST and answers 303 to where the result lives.
    // Following it sends a GET the journal never saw; calling it FAILED would hide an effect.
    IdempotencyKey key = IdempotencyKey.generate();
    server.plan().next(Fault.commitThenRedirect(303, "/orders/1"));
    AdapterDriver.Reply r = session().send(call("create-order", key));
    assertEquals(201, r.status(), "retried with its key, the stored result came back");
    assertTrue(r.replayed());
    assertEquals(0, requestsTo("/orders/1"), "the redirect was not followed");
    assertSucceededOnce("create-order", key, 2);
    assertTrue(record("create-order", key).attempts().get(0).mayHaveTakenEffect(),
        "a 303 to a POST may come after its effect");
  }

  @Test
  void aFoundOrMovedForAKeyedPostIsRetriedWithItsKeyNeverFollowed() throws Exception {
    for (int status : new int[] {301, 302}) {
      IdempotencyKey key = IdempotencyKey.generate();
      server.plan().next(Fault.redirect(status, "/moved"));
      AdapterDriver.Reply r = session().send(call("create-order", key));
      assertEquals(201, r.status());
      assertEquals(2, requestsWith(key));
      assertEquals(0, requestsTo("/moved"), "the redirect was not followed");
      assertEquals(1, server.effectCount(key.value()));
      assertEquals(2, record("create-order", key).attempts().size(), "requests on the wire = attempts");
    }
  }

  @Test
  void untaggedRequestsKeepTheClientsOwnRedirects() throws Exception {
    // Idem changes nothing for a call it passes through: the HTTP client follows the redirect as it
    // was configured to (OkHttp by default; the JDK driver's client with Redirect.NORMAL).
    org.junit.jupiter.api.Assumptions.assumeTrue(driver().clientFollowsRedirects(),
        "the driver's HTTP client follows no redirects, so there are none for Idem to leave alone");
    server.plan().next(Fault.redirect(307, "/moved"));
    AdapterDriver.Reply r = session(UntaggedPolicy.PASS_THROUGH).send(call(null, null));
    assertEquals(1, requestsTo("/moved"), "followed by the client");
    assertEquals(400, r.status(), "the answer at /moved: an untagged POST carries no key");
    assertEquals(Optional.empty(), r.state());
    assertTrue(allRecords().isEmpty());
  }

  // ---------------------------------------------------------------- queued delivery

  @Test
  void enqueuedRequestIsDeliveredByTheOutboxAfterAReopen() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    OperationId id = session().enqueue(new Call(server.url("/orders"), "create-order", key, ORDER,
        Map.of("Authorization", "Bearer s3cr3t")));
    assertEquals(key, id.key());
    assertEquals(0, server.requestCount(), "journaled, not sent");
    OperationRecord queued = journal.find(id).orElseThrow();
    assertEquals(OperationState.PENDING, queued.state());
    assertTrue(queued.request().header("Authorization").isEmpty(), "secrets stay out of the journal");

    // A restart: a new executor and adapter over the same journal; the app registers the transport.
    // (No fault here: the outbox's idle polls move virtual time while an attempt is on the wire, so
    // a backoff would race them; retries with one key are the other scenarios' business. For the
    // same reason the lease is long: an attempt that waited half its lease for the worker thread,
    // on the virtual clock that those polls move, is rightly not sent, and counts as an attempt.)
    IdempotentExecutor afterRestart = executor(journal, b -> b.leaseFor(Duration.ofDays(1)));
    Session reopened = session(afterRestart, AdapterSupport.DEFAULT_KEY_HEADER, UntaggedPolicy.PASS_THROUGH);
    OutboxDispatcher outbox = OutboxDispatcher.builder(afterRestart)
        .register("create-order", reopened.resumeTransport())
        .clock(time.clock()).scheduler(time.scheduler()).syncWorkers(1)
        .build().start();
    closeLater(outbox);
    Outcome out = await(time, outbox.await(id));
    assertEquals(201, out.response().status());
    assertSucceededOnce("create-order", key, 1);
  }

  // ---------------------------------------------------------------- helpers

  /**
   * Waits for a future, running the virtual time's due tasks from this thread while attempts
   * travel on other threads; fails after 15 real seconds rather than hang.
   *
   * @param <T> the result type
   * @param time the virtual time whose tasks to run
   * @param future the future
   * @return its result
   * @throws Exception the future's failure, unwrapped
   */
  public static <T> T await(VirtualTime time, CompletableFuture<T> future) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (!future.isDone()) {
      if (System.nanoTime() > deadline) {
        future.cancel(false);
        fail("did not finish within 15 s; pending virtual tasks: " + time.pendingTasks());
      }
      if (!time.runNextTask()) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      }
    }
    try {
      return future.get(1, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      while (c instanceof java.util.concurrent.CompletionException && c.getCause() != null) {
        c = c.getCause();
      }
      if (c instanceof Exception ex) {
        throw ex;
      }
      throw e;
    } catch (TimeoutException e) {
      throw new AssertionError("done but no result", e);
    }
  }

  private Session session() throws Exception {
    return session(UntaggedPolicy.PASS_THROUGH);
  }

  private Session session(UntaggedPolicy untagged) throws Exception {
    return session(executor(journal, b -> { }), AdapterSupport.DEFAULT_KEY_HEADER, untagged);
  }

  /** A session that passes untagged requests through, over {@code j} with the executor {@code custom} sets up. */
  private Session session(InMemoryJournal j, Consumer<IdempotentExecutor.Builder> custom) throws Exception {
    return session(executor(j, custom), AdapterSupport.DEFAULT_KEY_HEADER, UntaggedPolicy.PASS_THROUGH);
  }

  private Session session(IdempotentExecutor executor, String keyHeader, UntaggedPolicy untagged) throws Exception {
    return driver().open(new Setup(executor, time, keyHeader, KeyHeaderFormat.BARE, untagged));
  }

  /** An executor on virtual time; random 0.5, so backoff waits half its ceiling. */
  private IdempotentExecutor executor(InMemoryJournal j, Consumer<IdempotentExecutor.Builder> custom) {
    IdempotentExecutor.Builder b = IdempotentExecutor.builder().journal(j).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).random(() -> 0.5);
    custom.accept(b);
    return b.build();
  }

  private Call call(String operation, IdempotencyKey key) {
    return new Call(server.url("/orders"), operation, key, ORDER, Map.of());
  }

  private OperationRecord record(String operation, IdempotencyKey key) throws IOException {
    return journal.find(new OperationId(OperationId.DEFAULT_SCOPE, operation, key))
        .orElseThrow(() -> new AssertionError("not journaled: " + operation + " " + key));
  }

  private List<OperationRecord> allRecords() throws IOException {
    List<OperationRecord> all = new ArrayList<>();
    for (OperationState s : OperationState.values()) {
      OperationId after = null;
      // Paged to an empty page: a journal may return short pages while more follow.
      for (List<OperationRecord> page; !(page = journal.findByState(s, after, 100)).isEmpty(); ) {
        all.addAll(page);
        after = page.get(page.size() - 1).id();
      }
    }
    return all;
  }

  private long requestsWith(IdempotencyKey key) {
    return server.recordedRequests().stream().filter(r -> r.keyHeader().equals(Optional.of(key.value()))).count();
  }

  private long requestsTo(String path) {
    return server.recordedRequests().stream().filter(r -> r.path().equals(path)).count();
  }

  /**
   * The effect ran once; the key went out on each of {@code requests} requests; the operation is
   * SUCCEEDED, with one journaled attempt per request on the wire.
   */
  private void assertSucceededOnce(String operation, IdempotencyKey key, int requests) throws IOException {
    assertEquals(1, server.effectCount(key.value()));
    assertKeyOnEveryRequest(key, requests);
    OperationRecord rec = record(operation, key);
    assertEquals(OperationState.SUCCEEDED, rec.state());
    assertEquals(requests, rec.attempts().size(), "requests on the wire = attempts in the journal");
  }

  private void assertKeyOnEveryRequest(IdempotencyKey key, int requests) {
    List<ReceivedRequest> got = server.recordedRequests();
    assertEquals(requests, got.size(), "requests at the server");
    for (ReceivedRequest r : got) {
      assertEquals(Optional.of(key.value()), r.keyHeader(), "the operation's key on request " + r.sequence());
    }
  }
}
