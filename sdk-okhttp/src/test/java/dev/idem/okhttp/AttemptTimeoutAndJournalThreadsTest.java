package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.client;
import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.spi.AttemptTimeoutException;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 14: attemptTimeout was enforced only on the async path; and journal writes of the async
 * path ran on OkHttp's callback thread, under the driver's lock.
 */
class AttemptTimeoutAndJournalThreadsTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  @Test
  void aHungSyncAttemptEndsByAttemptTimeoutIsAmbiguousAndIsRetriedWithTheSameKey() throws Exception {
    // The server commits, then holds its answer far longer than the attempt may take. This is the
    // one place with real waiting (200 ms at the socket); the assertions are on the journal.
    server.plan().next(Fault.commitThenDelayResponse(Duration.ofSeconds(3)));
    IdempotentExecutor executor = f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().attemptTimeout(Duration.ofMillis(200)).build()).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");

    try (Response r = client(IdemOkHttp.builder(executor).build()).newCall(order(server.url("/orders"), op)).execute()) {
      assertEquals(201, r.code());
      assertTrue(IdempotencyResult.of(r).orElseThrow().replayed(), "the retry got the stored result");
    }

    OperationRecord rec = f.record(op);
    assertEquals(OperationState.SUCCEEDED, rec.state());
    assertEquals(2, rec.attempts().size());
    AttemptRecord first = rec.attempts().get(0);
    assertEquals(Classification.AMBIGUOUS, first.classification());
    assertEquals(AttemptTimeoutException.class.getName(), first.exceptionClass());
    Fixture.assertKeyOnEveryRequest(server, op.key().value(), 2);
    assertEquals(1, server.effectCount(op.key().value()));
  }

  @Test
  void journalWorkOfAnEnqueuedCallNeverHoldsOkHttpsCallbackThread() throws Exception {
    CountDownLatch journalEntered = new CountDownLatch(1);
    CountDownLatch journalMayGoOn = new CountDownLatch(1);
    List<String> threads = new CopyOnWriteArrayList<>();
    ForwardingJournal stuck = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
        threads.add(Thread.currentThread().getName());
        journalEntered.countDown();
        try {
          journalMayGoOn.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        super.recordAttempt(id, lease, attempt);
      }
    };
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(stuck).clock(f.time.clock())
        .scheduler(f.time.scheduler()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequestsPerHost(1);
    OkHttpClient client = new OkHttpClient.Builder().dispatcher(dispatcher).addInterceptor(idem.interceptor())
        .retryOnConnectionFailure(false).build();
    try {
      CallFactoryTest.Result a = new CallFactoryTest.Result();
      idem.callFactory(client).newCall(order(server.url("/orders"), IdempotentOperation.of("create-order")))
          .enqueue(a);
      assertTrue(journalEntered.await(10, TimeUnit.SECONDS));

      // The journal is stuck recording the answer; OkHttp's thread and the host's only slot are free.
      CallFactoryTest.Result b = new CallFactoryTest.Result();
      client.newCall(new Request.Builder().url(server.url("/health").toString()).build()).enqueue(b);
      assertTrue(b.get().startsWith("201"));
      assertFalse(a.body.isDone());
      assertEquals(1, threads.size());
      assertTrue(threads.get(0).startsWith("idem-async-"), "recorded on " + threads.get(0));

      journalMayGoOn.countDown();
      assertTrue(a.get().startsWith("201"));
    } finally {
      journalMayGoOn.countDown();
    }
  }
}
