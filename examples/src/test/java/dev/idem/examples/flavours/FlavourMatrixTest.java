package dev.idem.examples.flavours;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.ProtocolStatuses;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.RetryPolicy;
import dev.idem.examples.childjvm.ChildJvm;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotencyResult;
import dev.idem.okhttp.IdempotentOperation;
import dev.idem.server.FingerprintMode;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 16's matrix: every scenario against every flavour of server that the test kit can play,
 * with Idem at its defaults (a short retry deadline and delays aside, for speed, and the
 * {@link ProtocolStatuses} preset that says which status means key reuse, which the user has to
 * declare). Each case asserts what the server did (the effect count of the key), that every
 * request carried the same key and the same bytes, and the journal's final state: SUCCEEDED, or
 * UNCERTAIN where nobody can know the outcome, never FAILED while an effect of this payload may
 * exist.
 *
 * <p>The journal is the embedded SQLite one in every scenario. The two crash scenarios (b and e)
 * share one real child JVM for all flavours ({@link FlavourKillChild}): it sends every crash
 * operation at once, the servers hold them, the parent SIGKILLs the child, then reopens its journal
 * and resumes. In b the server is still working on the request when the child dies (slow
 * processing), so the effect happens after the kill and the resume meets the key in flight; in e
 * the server committed attempt 1 and holds back its answer, and every resumed attempt gets 503.
 * A real kill rather than a state built with the journal API, so that e also proves what the
 * journal makes of a dead process's attempt at open (an ambiguous attempt), which no in-process
 * close can reproduce. An @AfterAll prints the scenario × flavour table.
 */
class FlavourMatrixTest {
  static final String BODY = "{\"sku\": \"A-1\",  \"qty\":2, \"amount\":1.50}"; // not canonical, on purpose
  private static final String OTHER_BODY = "{\"sku\": \"A-1\",  \"qty\":3, \"amount\":1.50}";
  private static final MediaType JSON = MediaType.get("application/json");
  private static final byte[] SECRET = "flavour-matrix-hmac-secret".getBytes(StandardCharsets.UTF_8);
  private static final RetryPolicy POLICY = RetryPolicy.builder().baseDelay(Duration.ofMillis(10))
      .maxDelay(Duration.ofSeconds(2)).deadline(Duration.ofSeconds(15)).build();
  /** How long the server works on the killed child's request: the kill lands well inside it. */
  private static final Duration KILLED_ATTEMPT_PROCESSING = Duration.ofSeconds(3);

  /** The servers users meet; each changes one thing from the IETF draft, as the issue lists them. */
  enum Flavour {
    IETF("IETF", b -> b.mismatchStatus(422).sendInFlightRetryAfter(true).replayMarker(true).storeServerErrors(false)
        .fingerprintMode(FingerprintMode.CANONICAL_JSON), ProtocolStatuses.ietfDraft()),
    REUSE_417("417 reuse", b -> b.mismatchStatus(417), ProtocolStatuses.reuseAs417()),
    REUSE_409("409 reuse", b -> b.mismatchStatus(409), ProtocolStatuses.reuseAs409()),
    BARE_409("409 no R-A", b -> b.sendInFlightRetryAfter(false), ProtocolStatuses.ietfDraft()),
    NO_MARKER("no marker", b -> b.replayMarker(false), ProtocolStatuses.ietfDraft()),
    STORES_5XX("5xx stored", b -> b.storeServerErrors(true), ProtocolStatuses.ietfDraft()),
    RAW_BYTES("raw bytes", b -> b.fingerprintMode(FingerprintMode.RAW_BYTES), ProtocolStatuses.ietfDraft());

    final String label;
    final UnaryOperator<IdempotentServer.Builder> server;
    final ProtocolStatuses protocol;

    Flavour(String label, UnaryOperator<IdempotentServer.Builder> server, ProtocolStatuses protocol) {
      this.label = label;
      this.server = server;
      this.protocol = protocol;
    }

    IdempotentServer start() {
      return server.apply(IdempotentServer.builder()).start();
    }

    boolean marksReplays() {
      return this != NO_MARKER;
    }
  }

  enum Scenario {
    A("a. lost response after commit"),
    B("b. kill -9 in attempt 1, resume in a new JVM"),
    C("c. key reuse (extra effects)"),
    D("d. two live instances, one key"),
    E("e. crash after commit, then 503s");

    final String label;

    Scenario(String label) {
      this.label = label;
    }
  }

  private static final Map<Scenario, Map<Flavour, String>> TABLE = new ConcurrentHashMap<>();

  @TempDir
  static Path shared;

  private static CrashRun crashRun;

  // ---- a. lost response after commit ------------------------------------------------------------

  @ParameterizedTest
  @EnumSource(Flavour.class)
  void lostResponseAfterCommitEndsSucceededWithOneEffect(Flavour f, @TempDir Path dir) throws Exception {
    try (IdempotentServer server = f.start(); JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      IdemOkHttp idem = IdemOkHttp.builder(executor(journal, f)).build();
      OkHttpClient client = client(idem);
      IdempotentOperation op = IdempotentOperation.of("create-order");
      String key = op.key().value();
      server.plan().next(Fault.commitThenDropResponse());

      boolean replayed;
      try (Response r = client.newCall(request(server.url("/orders").toString(), op, BODY)).execute()) {
        assertEquals(201, r.code());
        assertTrue(r.body().string().contains(key), "the response is the stored result of the first attempt");
        IdempotencyResult result = IdempotencyResult.of(r).orElseThrow();
        assertEquals(OperationState.SUCCEEDED, result.state());
        assertEquals(f.marksReplays(), result.replayed(), "a replay is reported as one iff the server marks it");
        assertFalse(result.fromJournal());
        replayed = result.replayed();
      }

      assertEquals(1, server.effectCount(key));
      assertSameKeyAndBody(server, key, BODY, 2);
      OperationRecord record = journal.find(op.id()).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, record.state());
      assertTrue(record.hasAmbiguousAttempt(), "the lost response is recorded as an ambiguous attempt");
      note(Scenario.A, f, record.state(), server.effectCount(key), replayed ? "replay marked" : "replay unmarked");
    }
  }

  // ---- b. kill -9 during attempt 1, then resume in a new JVM -----------------------------------

  @ParameterizedTest
  @EnumSource(Flavour.class)
  void killedDuringAttemptOneThenResumedInAnotherJvmEndsSucceededWithOneEffect(Flavour f) throws Exception {
    CrashOutcome out = crashRun().killedDuringAttempt.get(f);
    assertEquals(0, out.effectsAtKill, "the kill landed before the server ran the effect");
    assertEquals(OperationState.SUCCEEDED, out.record.state(), () -> "final record: " + out.record);
    assertEquals(1, out.effects);
    assertEquals(out.key, out.record.id().key().value(), "the journal resumed the key the child sent");
    assertTrue(out.requests.size() >= 2, "the resume sent the operation again");
    assertRequestsCarry(out.requests, out.key, BODY);
    assertTrue(out.record.hasAmbiguousAttempt(), "the dead process's attempt counts as ambiguous");
    // The server was still working on the dead child's request when the resume began: the resume
    // must have waited through "in flight" answers (with or without Retry-After), not failed on them.
    long inFlight = count(out.record, 409);
    assertTrue(inFlight >= 1, () -> "the resume never met the key in flight: " + out.record.attempts());
    note(Scenario.B, f, out.record.state(), out.effects, inFlight + "x409");
  }

  // ---- c. key reuse -----------------------------------------------------------------------------

  @ParameterizedTest
  @EnumSource(Flavour.class)
  void keyReusedWithAnotherPayloadIsRefusedTheSameWayEveryTime(Flavour f, @TempDir Path dir) throws Exception {
    try (IdempotentServer server = f.start(); JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      IdempotencyKey key = IdempotencyKey.generate();
      // Another client (another app, a bug) used the key first, with its own payload.
      try (Response first = new OkHttpClient.Builder().retryOnConnectionFailure(false).build().newCall(
          new Request.Builder().url(server.url("/orders").toString()).header("Idempotency-Key", key.value())
              .post(RequestBody.create(BODY, JSON)).build()).execute()) {
        assertEquals(201, first.code());
      }
      assertEquals(1, server.effectCount(key.value()));

      OkHttpClient client = client(IdemOkHttp.builder(executor(journal, f)).build());
      IdempotentOperation op = IdempotentOperation.of("create-order").withKey(key);
      Request request = request(server.url("/orders").toString(), op, OTHER_BODY);

      IdempotencyKeyReusedException live = assertThrows(IdempotencyKeyReusedException.class,
          () -> client.newCall(request).execute().close());
      assertTrue(live.detectedByServer());
      assertEquals(op.id(), live.operationId());
      int requestsAfterFirst = server.requestCount();
      assertEquals(2, requestsAfterFirst, "a reuse answer is final: nothing is retried");
      assertEquals(OperationState.FAILED, journal.find(op.id()).orElseThrow().state());

      IdempotencyKeyReusedException again = assertThrows(IdempotencyKeyReusedException.class,
          () -> client.newCall(request).execute().close(), "a second execution reports the reuse the same way");
      assertEquals(op.id(), again.operationId());
      assertEquals(live.detectedByServer(), again.detectedByServer());
      assertEquals(requestsAfterFirst, server.requestCount(), "the second execution sent nothing");

      assertEquals(1, server.effectCount(key.value()), "no effect for the reused key's second payload");
      assertSameKeyAndBody(server, key.value(), null, 2);
      OperationRecord record = journal.find(op.id()).orElseThrow();
      assertEquals(OperationState.FAILED, record.state());
      note(Scenario.C, f, record.state(), server.effectCount(key.value()) - 1, "reuse thrown twice, sent once");
    }
  }

  // ---- d. two live instances with one key -------------------------------------------------------

  @ParameterizedTest
  @EnumSource(Flavour.class)
  void twoLiveInstancesWithOneDerivedKeyMakeOneEffect(Flavour f, @TempDir Path dir) throws Exception {
    IdempotencyKey key = IdempotencyKey.derive(SECRET, OperationId.DEFAULT_SCOPE, "create-order", "order-42");
    try (IdempotentServer server = f.start();
        JdbcJournal journalA = JdbcJournal.openEmbedded(dir.resolve("instance-a"));
        JdbcJournal journalB = JdbcJournal.openEmbedded(dir.resolve("instance-b"))) {
      // Whichever request claims the key works for a while; the other meets it in flight.
      server.plan().forKey(key.value(), 2, Fault.slowProcessing(Duration.ofMillis(500)));
      List<JdbcJournal> journals = List.of(journalA, journalB);
      List<OkHttpClient> clients = List.of(client(IdemOkHttp.builder(executor(journalA, f)).build()),
          client(IdemOkHttp.builder(executor(journalB, f)).build()));
      IdempotentOperation op = IdempotentOperation.of("create-order").withKey(key);
      String url = server.url("/orders").toString();
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> instances = new ArrayList<>();
      Map<Integer, Object> answers = new ConcurrentHashMap<>();
      for (int i = 0; i < 2; i++) {
        int n = i;
        Thread t = new Thread(() -> {
          try {
            go.await();
            try (Response r = clients.get(n).newCall(request(url, op, BODY)).execute()) {
              answers.put(n, r.code());
            }
          } catch (IOException | InterruptedException e) {
            answers.put(n, e);
          }
        }, "instance-" + i);
        t.start();
        instances.add(t);
      }
      go.countDown();
      for (Thread t : instances) {
        t.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(t.isAlive(), "an instance is still waiting after 30 s");
      }

      assertEquals(1, server.effectCount(key.value()), () -> "answers " + answers);
      assertSameKeyAndBody(server, key.value(), BODY, 3); // two first attempts and at least one after a 409
      List<OperationState> states = new ArrayList<>();
      for (JdbcJournal j : journals) {
        OperationRecord r = j.find(op.id()).orElseThrow();
        states.add(r.state());
        assertNotEquals(OperationState.FAILED, r.state(), () -> "FAILED with the effect at the server: " + r);
      }
      assertTrue(states.contains(OperationState.SUCCEEDED), () -> "neither instance succeeded: " + states
          + ", answers " + answers);
      boolean sawInFlight = journals.stream().flatMap(j -> find(j, op.id()).attempts().stream())
          .anyMatch(a -> a.statusCode().orElse(0) == 409);
      assertTrue(sawInFlight, "the instances overlapped: one of them met the key in flight");
      note(Scenario.D, f, states.get(0) + "+" + states.get(1), server.effectCount(key.value()), "");
    }
  }

  // ---- e. crash after attempt 1 committed, then 503s ---------------------------------------------

  @ParameterizedTest
  @EnumSource(Flavour.class)
  void crashAfterCommitThen503sEndsUncertainNeverFailed(Flavour f) throws Exception {
    CrashOutcome out = crashRun().committedThen503.get(f);
    assertEquals(1, out.effectsAtKill, "attempt 1 committed at the server before the kill");
    assertEquals(OperationState.UNCERTAIN, out.record.state(), () -> "final record: " + out.record);
    assertEquals(1, out.effects);
    assertEquals(out.key, out.record.id().key().value());
    assertRequestsCarry(out.requests, out.key, BODY);
    long resumed503 = count(out.record, 503);
    assertTrue(resumed503 >= 1, () -> "the resume met the 503s: " + out.record.attempts());
    assertEquals(1 + resumed503, out.requests.size(), "every resumed attempt got a 503");
    note(Scenario.E, f, out.record.state(), out.effects, resumed503 + "x503");
  }

  @AfterAll
  static void printTable() {
    StringBuilder sb = new StringBuilder("\nIssue 16 matrix (final journal state, effects at the server for the key;"
        + " c counts extra effects):\n| scenario |");
    for (Flavour f : Flavour.values()) {
      sb.append(' ').append(f.label).append(" |");
    }
    sb.append("\n|---|").append("---|".repeat(Flavour.values().length)).append('\n');
    for (Scenario s : Scenario.values()) {
      sb.append("| ").append(s.label).append(" |");
      Map<Flavour, String> row = TABLE.getOrDefault(s, Map.of());
      for (Flavour f : Flavour.values()) {
        sb.append(' ').append(row.getOrDefault(f, "not run / failed")).append(" |");
      }
      sb.append('\n');
    }
    System.out.println(sb);
  }

  // ---- the crash run: one child JVM for scenarios b and e of every flavour ----------------------

  private record CrashOutcome(String key, long effectsAtKill, long effects, OperationRecord record,
      List<ReceivedRequest> requests) {
  }

  private record CrashRun(Map<Flavour, CrashOutcome> killedDuringAttempt, Map<Flavour, CrashOutcome> committedThen503) {
  }

  private static synchronized CrashRun crashRun() throws Exception {
    if (crashRun == null) {
      crashRun = runCrash(shared);
    }
    return crashRun;
  }

  private static CrashRun runCrash(Path tmp) throws Exception {
    Path dir = tmp.resolve("crash-journal");
    Map<Flavour, IdempotentServer> killed = new EnumMap<>(Flavour.class);
    Map<Flavour, IdempotentServer> committed = new EnumMap<>(Flavour.class);
    try {
      List<String> args = new ArrayList<>(List.of(dir.toString()));
      for (Flavour f : Flavour.values()) {
        IdempotentServer b = f.start();
        killed.put(f, b);
        b.plan().next(Fault.slowProcessing(KILLED_ATTEMPT_PROCESSING));
        IdempotentServer e = f.start();
        committed.put(f, e);
        e.plan().next(Fault.commitThenDelayResponse(Duration.ofSeconds(60))); // the answer never comes
        args.add(bName(f) + "=" + b.url("/orders"));
        args.add(eName(f) + "=" + e.url("/orders"));
      }
      Path log = tmp.resolve("child.log");
      Process child = ChildJvm.builder(FlavourKillChild.class, args).redirectOutput(log.toFile()).start();
      try {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!allArrived(killed, committed)) {
          if (!child.isAlive() || System.nanoTime() > deadline) {
            throw new AssertionError("the child never had every attempt in flight:\n" + Files.readString(log));
          }
          Thread.sleep(5);
        }
      } finally {
        child.destroyForcibly(); // SIGKILL: no shutdown hooks, no close of the journal
        assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child did not die");
      }
      String childLog = Files.readString(log);
      assertFalse(childLog.contains("ANSWERED") || childLog.contains("FAILED "),
          "the child got an answer before the kill, so nothing was in flight:\n" + childLog);

      Map<Flavour, Long> killedEffectsAtKill = new EnumMap<>(Flavour.class);
      for (Flavour f : Flavour.values()) {
        killedEffectsAtKill.put(f, killed.get(f).effectCount(onlyKey(killed.get(f))));
        committed.get(f).plan().forNext(50, Fault.status(503)); // every resumed attempt
      }

      Map<Flavour, CrashOutcome> b = new EnumMap<>(Flavour.class);
      Map<Flavour, CrashOutcome> e = new EnumMap<>(Flavour.class);
      // The app restarted: open the dead child's journal and resume, one flavour per thread (each
      // flavour's own executor, as an app would have one per target API).
      try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
        Map<Flavour, Throwable> errors = new ConcurrentHashMap<>();
        List<Thread> resumers = new ArrayList<>();
        for (Flavour f : Flavour.values()) {
          Thread t = new Thread(() -> {
            try {
              IdemOkHttp idem = IdemOkHttp.builder(executor(journal, f)).build();
              ResumeHandler handler = ResumeHandler.of(idem.transport(client(idem)), outcome -> { },
                  (OperationException failure) -> { });
              idem.executor().resumePending(Map.of(bName(f), handler, eName(f), handler));
            } catch (Throwable x) {
              errors.put(f, x);
            }
          }, "resume-" + f);
          t.start();
          resumers.add(t);
        }
        for (Thread t : resumers) {
          t.join(TimeUnit.SECONDS.toMillis(60));
          assertFalse(t.isAlive(), "a resume still runs after 60 s");
        }
        assertEquals(Map.of(), errors);
        for (Flavour f : Flavour.values()) {
          b.put(f, outcome(journal, killed.get(f), bName(f), killedEffectsAtKill.get(f)));
          e.put(f, outcome(journal, committed.get(f), eName(f), 1));
        }
      }
      return new CrashRun(b, e);
    } finally {
      killed.values().forEach(IdempotentServer::close);
      committed.values().forEach(IdempotentServer::close);
    }
  }

  private static CrashOutcome outcome(JdbcJournal journal, IdempotentServer server, String name, long atKill)
      throws Exception {
    String key = onlyKey(server);
    OperationRecord r = journal.find(new OperationId(OperationId.DEFAULT_SCOPE, name, IdempotencyKey.of(key)))
        .orElseThrow(() -> new AssertionError(name + ": the journal has no record under the key the server saw"));
    return new CrashOutcome(key, atKill, server.effectCount(key), r, server.recordedRequests());
  }

  private static boolean allArrived(Map<Flavour, IdempotentServer> killed, Map<Flavour, IdempotentServer> committed)
      throws InterruptedException {
    for (IdempotentServer s : killed.values()) {
      if (s.requestCount() == 0) {
        return false;
      }
    }
    for (IdempotentServer s : committed.values()) {
      if (s.keysSeen().isEmpty() || !s.awaitEffects(onlyKey(s), 1, Duration.ZERO)) {
        return false;
      }
    }
    return true;
  }

  private static String onlyKey(IdempotentServer server) {
    assertEquals(1, server.keysSeen().size(), () -> "keys seen: " + server.keysSeen());
    return server.keysSeen().iterator().next();
  }

  private static String bName(Flavour f) {
    return "killed-" + f.name().toLowerCase();
  }

  private static String eName(Flavour f) {
    return "committed-" + f.name().toLowerCase();
  }

  // ---- shared helpers (the child uses them too) ------------------------------------------------

  static OkHttpClient client(IdemOkHttp idem) {
    // OkHttp's own silent retry would be a second request the fault plan did not script.
    return new OkHttpClient.Builder().addInterceptor(idem.interceptor()).retryOnConnectionFailure(false)
        .readTimeout(Duration.ofSeconds(30)).build();
  }

  static Request request(String url, IdempotentOperation op, String body) {
    return new Request.Builder().url(url).post(RequestBody.create(body, JSON))
        .tag(IdempotentOperation.class, op).build();
  }

  private static IdempotentExecutor executor(JdbcJournal journal, Flavour f) {
    return IdempotentExecutor.builder().journal(journal).retryPolicy(POLICY).protocol(f.protocol).build();
  }

  private static OperationRecord find(JdbcJournal journal, OperationId id) {
    try {
      return journal.find(id).orElseThrow();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** At least {@code min} requests, every one with {@code key}, and with {@code body} if given. */
  private static void assertSameKeyAndBody(IdempotentServer server, String key, String body, int min) {
    List<ReceivedRequest> requests = server.recordedRequests();
    assertTrue(requests.size() >= min, () -> "expected at least " + min + " requests, got " + requests.size());
    assertRequestsCarry(requests, key, body);
  }

  private static void assertRequestsCarry(List<ReceivedRequest> requests, String key, String body) {
    for (ReceivedRequest r : requests) {
      assertEquals(Optional.of(key), r.keyHeader(), () -> "request " + r.sequence() + " carried another key");
      if (body != null) {
        assertEquals(body, r.body(), () -> "request " + r.sequence() + " carried other bytes");
      }
    }
  }

  private static void note(Scenario s, Flavour f, Object state, long effects, String detail) {
    TABLE.computeIfAbsent(s, x -> new ConcurrentHashMap<>())
        .put(f, state + ", " + effects + (detail.isEmpty() ? "" : " (" + detail + ")"));
  }

  private static long count(OperationRecord r, int status) {
    return r.attempts().stream().filter(a -> a.statusCode().orElse(0) == status).count();
  }
}
