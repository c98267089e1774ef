package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Java 21+: {@link IdempotentHttpClient#shutdown()} forwards to the wrapped client, whose contract
 * is that requests already submitted run to completion and only new ones are refused. A keyed
 * {@code sendAsync} that got a 503 and is waiting out its backoff was submitted before the
 * shutdown, yet its next attempts are refused by the shut-down client ({@code IOException:
 * closed}, before a byte was pulled, so "not sent"), the attempts run out, and the operation ends
 * FAILED: durable and terminal, never re-sent by a resume or an outbox, although the target only
 * asked for a retry and the refusal was this process's own shutdown. Closing the executor instead
 * leaves such an operation PENDING with its key, as the class Javadoc promises for close().
 *
 * <p>Fixed by stopping the client's keyed calls before the wrapped client shuts down (see
 * {@link IdempotentHttpClient#shutdown()}). The tests of a shutdown during a backoff run only on
 * Java 21+ (where HttpClient has shutdown); run them with
 * {@code JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 mvn -B -q -o -pl sdk-java11-httpclient -am test
 * -Dtest=ShutdownDuringBackoffTest -Dsurefire.failIfNoSpecifiedTests=false}.
 *
 * <p>Found by a review on 2026-12-04.
 */
class ShutdownDuringBackoffTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  @EnabledForJreRange(min = JRE.JAVA_21)
  void anOperationWaitingOutItsBackoffDoesNotEndFailedBecauseTheClientShutDown() throws Exception {
    IdempotentServer server = serverExtension.server();
    server.plan().next(Fault.status(503));
    Fixture f = new Fixture();
    HttpClient own = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
    IdempotentHttpClient client = IdempotentHttpClient.builder(own).idempotentExecutor(f.executor).build();
    OperationCall call = client.operation("create-order");
    OperationId id = call.operationId();
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (f.time.pendingTasks() == 0 && System.nanoTime() < end) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2)); // the 503 arrives, the backoff starts
    }
    assertEquals(OperationState.PENDING, f.record(id).state(), "waiting out its backoff after the 503");

    client.shutdown();

    String told;
    try {
      told = "HTTP " + f.await(future).statusCode();
    } catch (Exception e) {
      told = e.toString();
    }
    OperationRecord record = f.record(id);
    assertEquals(1, server.recordedRequests().size(), "only the 503 reached the server");
    assertNotEquals(OperationState.FAILED, record.state(),
        "an operation the target only asked to retry ended FAILED, for good, because this process shut its"
            + " client down; the caller was told: " + told + "; attempts: " + record.attempts());
    assertEquals(OperationState.PENDING, record.state(), "left for a resume or an outbox, with its key");
    assertEquals(1, record.attempts().size(), "no attempt used up by the shutdown; attempts: " + record.attempts());
    assertTrue(told.startsWith(OperationPendingException.class.getName()), "what the caller is told: " + told);
  }

  /** The blocking twin: the shutdown comes while {@code send} waits out its backoff. */
  @Test
  @EnabledForJreRange(min = JRE.JAVA_21)
  void aBlockingSendWaitingOutItsBackoffEndsPendingWhenTheClientShutsDown() throws Exception {
    IdempotentServer server = serverExtension.server();
    server.plan().next(Fault.status(503));
    AtomicReference<IdempotentHttpClient> client = new AtomicReference<>();
    // The executor's sleeper runs this as the backoff begins: the shutdown comes mid-backoff.
    Fixture f = new Fixture(b -> { }, c -> { }, delay -> client.get().shutdown(), null);
    HttpClient own = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
    client.set(IdempotentHttpClient.builder(own).idempotentExecutor(f.executor).build());
    OperationCall call = client.get().operation("create-order");
    OperationId id = call.operationId();

    OperationPendingException e = assertThrows(OperationPendingException.class,
        () -> call.send(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString()));

    OperationRecord record = f.record(id);
    assertEquals(1, server.recordedRequests().size(), "only the 503 reached the server");
    assertEquals(OperationState.PENDING, record.state(), "attempts: " + record.attempts() + "; told: " + e);
    assertEquals(1, record.attempts().size(), "no attempt used up by the shutdown; attempts: " + record.attempts());
  }

  /**
   * A keyed call made after the shutdown is refused as the JDK client refuses a request then,
   * before anything is journaled: journaled, it would be sent to a client that refuses it. On every
   * Java version (before 21 the shutdown only stops Idem's keyed calls).
   */
  @Test
  void aKeyedCallAfterTheShutdownIsRefusedBeforeItIsJournaled() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    HttpClient own = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
    IdempotentHttpClient client = IdempotentHttpClient.builder(own).idempotentExecutor(f.executor).build();
    client.shutdown();

    OperationCall async = client.operation("create-order");
    ExecutionException failed = assertThrows(ExecutionException.class, () -> async.sendAsync(
        Fixture.post(server.url("/orders"), "{}"), BodyHandlers.ofString()).get(5, TimeUnit.SECONDS));
    assertTrue(failed.getCause() instanceof IOException, String.valueOf(failed.getCause()));
    OperationCall sync = client.operation("create-order");
    assertThrows(IOException.class, () -> sync.send(Fixture.post(server.url("/orders"), "{}"), BodyHandlers.ofString()));

    assertEquals(0, server.recordedRequests().size());
    assertTrue(f.executor.find(async.operationId()).isEmpty(), "not journaled");
    assertTrue(f.executor.find(sync.operationId()).isEmpty(), "not journaled");
  }
}
