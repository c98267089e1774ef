package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Java 21+: the app's client follows redirects (or has an authenticator), so keyed attempts go
 * through the Idem client's own twin (see {@code KeyedClient}), which {@link IdempotentHttpClient#close()}
 * closes whatever the app passed in. A keyed call that got a 503 and is waiting out its backoff
 * when the app closes the Idem client (its executor the app's, so left open) has its next
 * attempts refused by the closed twin before a byte is sent, counted as not sent, and ends FAILED
 * when the attempts run out: terminal, never re-sent by a resume or an outbox, although the target
 * only asked for a retry. {@link IdempotentHttpClient#shutdown()} on the client without a twin
 * ends such a call PENDING with its key (ShutdownDuringBackoffTest); so must every way of stopping
 * the client, twin or not.
 *
 * <p>Fixed by stopping the keyed calls before close() closes the twin, when the executor is the
 * app's (an executor close() made ends them itself; see {@link IdempotentHttpClient#close()}).
 *
 * <p>The tests of a stop during a backoff run only on Java 21+ (where HttpClient can be shut down
 * and closed); run them with {@code JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 mvn -B -q -o -pl
 * sdk-java11-httpclient -am test -Dtest=TwinStopDuringBackoffTest -Dsurefire.failIfNoSpecifiedTests=false}.
 *
 * <p>Found by a review on 2026-12-04.
 */
class TwinStopDuringBackoffTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  /** How the app stops the Idem client. */
  enum Stop {
    SHUTDOWN(IdempotentHttpClient::shutdown),
    SHUTDOWN_NOW(IdempotentHttpClient::shutdownNow),
    CLOSE(IdempotentHttpClient::close);

    final Consumer<IdempotentHttpClient> action;

    Stop(Consumer<IdempotentHttpClient> action) {
      this.action = action;
    }
  }

  static Stream<Arguments> stopsAndModes() {
    return Stream.of(Stop.values()).flatMap(s -> Stream.of(Mode.values()).map(m -> Arguments.of(s, m)));
  }

  @ParameterizedTest(name = "{0}, {1}")
  @MethodSource("stopsAndModes")
  @EnabledForJreRange(min = JRE.JAVA_21)
  void aCallThroughTheTwinWaitingOutItsBackoffEndsPendingWithItsKeyWhenTheClientStops(Stop stop, Mode mode)
      throws Exception {
    assertStoppedDuringBackoffEndsPending(following(), stop, mode);
  }

  /** The client without a twin: shutdown() is ShutdownDuringBackoffTest's; shutdownNow() here. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("modes")
  @EnabledForJreRange(min = JRE.JAVA_21)
  void aCallWithoutATwinWaitingOutItsBackoffEndsPendingWhenTheClientShutsDownNow(Mode mode) throws Exception {
    assertStoppedDuringBackoffEndsPending(plain(), Stop.SHUTDOWN_NOW, mode);
  }

  static Stream<Mode> modes() {
    return Stream.of(Mode.values());
  }

  /**
   * Without a twin, close() over the app's client and executor closes nothing keyed calls use: a
   * call waiting out its backoff goes on and succeeds, as it would have without the close.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("modes")
  @EnabledForJreRange(min = JRE.JAVA_21)
  void closeOfAClientWithoutATwinLeavesTheAppsClientAndTheCallsGoingOn(Mode mode) throws Exception {
    IdempotentServer server = serverExtension.server();
    server.plan().next(Fault.status(503));
    AtomicReference<IdempotentHttpClient> client = new AtomicReference<>();
    Fixture f = mode == Mode.SYNC ? new Fixture(b -> { }, c -> { }, delay -> client.get().close(), null)
        : new Fixture();
    client.set(IdempotentHttpClient.builder(plain()).idempotentExecutor(f.executor).build());
    OperationCall call = client.get().operation("create-order");
    OperationId id = call.operationId();
    IdempotentHttpResponse<String> r;
    if (mode == Mode.SYNC) {
      r = call.send(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
    } else {
      CompletableFuture<IdempotentHttpResponse<String>> future =
          call.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
      awaitBackoff(f);
      client.get().close();
      r = f.await(future);
    }
    assertEquals(201, r.statusCode());
    assertEquals(OperationState.SUCCEEDED, f.record(id).state());
    Fixture.assertKeyOnEveryRequest(server, id.key(), 2);
    assertEquals(1, server.effectCount(id.key().value()));
  }

  /**
   * After close() the twin is closed (Java 21+): a keyed call through it is refused before
   * anything is journaled, as after shutdown(), rather than journaled and refused until it ends
   * FAILED. On every Java version, as aKeyedCallAfterTheShutdownIsRefusedBeforeItIsJournaled: the
   * keyed calls of a closed client stop whether or not this JVM can close the twin.
   */
  @Test
  void aKeyedCallAfterCloseOfAClientWithATwinIsRefusedBeforeItIsJournaled() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    IdempotentHttpClient client = IdempotentHttpClient.builder(following()).idempotentExecutor(f.executor).build();
    OperationCall first = client.operation("create-order");
    assertEquals(201, first.send(Fixture.post(server.url("/orders"), "{}"), BodyHandlers.ofString()).statusCode());
    client.close();

    OperationCall async = client.operation("create-order");
    assertThrows(IOException.class, () -> f.await(async.sendAsync(
        Fixture.post(server.url("/orders"), "{}"), BodyHandlers.ofString())));
    OperationCall sync = client.operation("create-order");
    assertThrows(IOException.class, () -> sync.send(Fixture.post(server.url("/orders"), "{}"), BodyHandlers.ofString()));

    assertEquals(1, server.recordedRequests().size(), "only the call before the close");
    assertTrue(f.executor.find(async.operationId()).isEmpty(), "not journaled");
    assertTrue(f.executor.find(sync.operationId()).isEmpty(), "not journaled");
  }

  /**
   * A keyed call gets a 503 and {@code stop} comes while it waits out its backoff (the sync path's
   * sleeper runs it as the backoff begins; the async path's from the test thread once the backoff
   * is scheduled). It must end PENDING, with its one attempt and its key, and a resume through a
   * live client must then send it with that key and succeed.
   */
  private void assertStoppedDuringBackoffEndsPending(HttpClient own, Stop stop, Mode mode) throws Exception {
    IdempotentServer server = serverExtension.server();
    server.plan().next(Fault.status(503));
    AtomicReference<IdempotentHttpClient> client = new AtomicReference<>();
    Fixture f = mode == Mode.SYNC ? new Fixture(b -> { }, c -> { }, delay -> stop.action.accept(client.get()), null)
        : new Fixture();
    client.set(IdempotentHttpClient.builder(own).idempotentExecutor(f.executor).build());
    OperationCall call = client.get().operation("create-order");
    OperationId id = call.operationId();

    String told;
    try {
      if (mode == Mode.SYNC) {
        told = "HTTP " + call.send(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString())
            .statusCode();
      } else {
        CompletableFuture<IdempotentHttpResponse<String>> future =
            call.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
        awaitBackoff(f);
        assertEquals(OperationState.PENDING, f.record(id).state(), "waiting out its backoff after the 503");
        stop.action.accept(client.get());
        told = "HTTP " + f.await(future).statusCode();
      }
    } catch (Exception e) {
      told = e.toString();
    }

    OperationRecord record = f.record(id);
    assertEquals(1, server.recordedRequests().size(), "only the 503 reached the server");
    assertEquals(OperationState.PENDING, record.state(), "an operation the target only asked to retry must stay"
        + " PENDING when this process stops its client; the caller was told: " + told + "; attempts: "
        + record.attempts());
    assertEquals(1, record.attempts().size(), "no attempt used up by the stop; attempts: " + record.attempts());
    assertTrue(told.startsWith(OperationPendingException.class.getName()), "what the caller is told: " + told);

    // The key survives: a resume through a live client sends the operation again with it.
    Outcome resumed = f.executor.resume(id, f.client.resumeTransport());
    assertEquals(201, resumed.response().status());
    assertEquals(OperationState.SUCCEEDED, f.record(id).state());
    Fixture.assertKeyOnEveryRequest(server, id.key(), 2);
    assertEquals(1, server.effectCount(id.key().value()));
  }

  /** Waits (in real time, bounded) until the 503 arrived and the async backoff is scheduled. */
  private static void awaitBackoff(Fixture f) {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (f.time.pendingTasks() == 0 && System.nanoTime() < end) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
    }
  }

  /** An app's client that follows redirects: keyed attempts go through the twin. */
  private static HttpClient following() {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).followRedirects(HttpClient.Redirect.NORMAL)
        .connectTimeout(Duration.ofSeconds(5)).build();
  }

  private static HttpClient plain() {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  }
}
