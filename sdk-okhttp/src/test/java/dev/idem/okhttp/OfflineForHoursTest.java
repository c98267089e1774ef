package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.ReceivedRequest;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okio.Buffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The target is unreachable for six hours of virtual time, then answers: every operation queued
 * meanwhile (through the outbox, or resumed by resumePending) is delivered exactly once with its
 * own key, none ends FAILED, and the journal says SUCCEEDED. The executor and the dispatcher run
 * on the testkit's virtual time with their defaults (retry policy, breaker, budget, poll backoff);
 * the requests are real OkHttp calls to the testkit's reference server, and while the network is
 * down each connect is refused before a byte is written.
 */
class OfflineForHoursTest {
  private static final int ORDERS = 8;
  private static final Duration OUTAGE = Duration.ofHours(6);

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  final NetworkSwitch network = new NetworkSwitch();
  /** The key header of every attempt that left the client (refused or not), by request body. */
  final Map<String, List<String>> keysByBody = Collections.synchronizedMap(new HashMap<>());

  /** The app's client: Idem's interceptor, then one that notes the key header of every attempt. */
  OkHttpClient client(IdemOkHttp idem) {
    Interceptor recorder = chain -> {
      Request r = chain.request();
      Buffer body = new Buffer();
      r.body().writeTo(body);
      keysByBody.computeIfAbsent(body.readUtf8(), b -> Collections.synchronizedList(new ArrayList<>()))
          .add(r.header(IdempotentServer.DEFAULT_KEY_HEADER));
      return chain.proceed(r);
    };
    return idem.install(new OkHttpClient.Builder()).addInterceptor(recorder).socketFactory(network).build();
  }

  /** Journals orders {@code from} to {@code to} (exclusive) for queued delivery; their bodies tell them apart. */
  List<OperationId> enqueueOrders(IdemOkHttp idem, IdempotentServer server, int from, int to) throws IOException {
    List<OperationId> ids = new ArrayList<>();
    for (int i = from; i < to; i++) {
      IdempotentOperation op = IdempotentOperation.of("create-order").withReference("cart-" + i);
      ids.add(idem.enqueue(Fixture.order(server.url("/orders"), op, body(i))));
    }
    return ids;
  }

  static String body(int i) {
    return "{\"cart\":" + i + "}";
  }

  void assertEachDeliveredOnceWithItsKey(IdempotentServer server, List<OperationId> ids) throws IOException {
    for (int i = 0; i < ids.size(); i++) {
      OperationId id = ids.get(i);
      String key = id.key().value();
      assertEquals(1, server.effectCount(key), "effects of " + key);
      List<String> sent = keysByBody.get(body(i));
      // Some were tried while offline, others only held back by the open breaker: all were kept.
      assertTrue(sent != null && !sent.isEmpty(), "the delivery of " + id + " left the client");
      assertTrue(sent.stream().allMatch(key::equals), "every attempt of " + id + " carried its key: " + sent);
      OperationRecord r = f.journal.find(id).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, r.state(), r.reason());
    }
    for (ReceivedRequest r : server.recordedRequests()) {
      assertTrue(ids.stream().anyMatch(id -> r.keyHeader().equals(Optional.of(id.key().value()))),
          "a request the server got carried one of the keys: " + r);
    }
    assertEquals(0, f.journal.findByState(OperationState.FAILED, null, 10).size());
    assertEquals(0, f.journal.findByState(OperationState.UNCERTAIN, null, 10).size());
  }

  /** While offline: nothing ended, nothing reached the server, and the attempts stayed few. */
  void assertStillPendingWithFewAttempts(IdempotentServer server, List<OperationId> ids) throws IOException {
    for (OperationId id : ids) {
      OperationRecord r = f.journal.find(id).orElseThrow();
      assertEquals(OperationState.PENDING, r.state(), r.reason());
      // The first round spends the policy's attempts; later rounds try an operation once each, at
      // most once per poll, and polls come once a minute once backed off (a few more while the
      // interval grows). The breaker holds most back: only its half-open probes are sent.
      assertTrue(r.attempts().size() <= 5 + OUTAGE.toMinutes() + 10, r.attempts().size() + " attempts");
    }
    assertEquals(0, server.requestCount(), "nothing reached the server while the network was down");
  }

  @Test
  void theOutboxDeliversEachOperationOnceWithItsKeyAfterSixHoursOffline() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = f.idem();
    // Synchronous transport on the test thread: each poll's deliveries run inside time.advance.
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem.executor()).clock(f.time.clock())
        .scheduler(f.time.scheduler()).workers(Runnable::run).register("create-order", idem.transport(client(idem)))
        .build().start();
    try {
      // The first order meets the refused connects alone, too few for the breaker to open and
      // pause it (the reported case: FAILED within 2 s); the others come a minute later.
      List<OperationId> ids = enqueueOrders(idem, server, 0, 1);
      f.time.advance(Duration.ofMinutes(1));
      ids.addAll(enqueueOrders(idem, server, 1, ORDERS));
      List<CompletableFuture<Outcome>> handles = new ArrayList<>();
      for (OperationId id : ids) {
        handles.add(outbox.await(id));
      }

      f.time.advance(OUTAGE);

      assertStillPendingWithFewAttempts(server, ids);
      assertTrue(outbox.isOffline(), "backed off as a whole");
      assertEquals(Duration.ofMinutes(1), outbox.currentPollInterval());
      handles.forEach(h -> assertFalse(h.isDone(), "queued operations wait"));
      assertTrue(network.refused() > ORDERS, "the client kept trying: " + network.refused() + " refused connects");

      network.up();
      f.time.advance(Duration.ofMinutes(3));

      for (int i = 0; i < ids.size(); i++) {
        assertEquals(ids.get(i).key(), handles.get(i).get(0, TimeUnit.SECONDS).key());
      }
      assertEachDeliveredOnceWithItsKey(server, ids);
      assertFalse(outbox.isOffline());
    } finally {
      outbox.close();
    }
  }

  @Test
  void resumePendingDeliversEachOperationOnceWithItsKeyAfterSixHoursOffline() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = f.idem();
    List<OperationId> ids = enqueueOrders(idem, server, 0, ORDERS);
    List<Outcome> delivered = new ArrayList<>();
    List<OperationException> told = new ArrayList<>();
    Map<String, ResumeHandler> handlers = Map.of("create-order",
        ResumeHandler.of(idem.transport(client(idem)), delivered::add, told::add));

    // The app resumes once a minute, as a scheduled job would.
    for (long minute = 0; minute < OUTAGE.toMinutes(); minute++) {
      ResumeSummary pass = idem.executor().resumePending(handlers);
      assertEquals(0, pass.failed() + pass.uncertain(), "minute " + minute + ": " + pass);
      f.time.advance(Duration.ofMinutes(1));
    }
    assertStillPendingWithFewAttempts(server, ids);
    assertTrue(told.stream().allMatch(e -> e.state() == OperationState.PENDING), "told PENDING, never more");
    assertTrue(network.refused() > ORDERS, "the client kept trying: " + network.refused() + " refused connects");

    network.up();
    for (int pass = 0; pass < 5 && delivered.size() < ORDERS; pass++) {
      idem.executor().resumePending(handlers);
      f.time.advance(Duration.ofMinutes(1));  // an open breaker lets its probe through within this
    }

    assertEquals(ORDERS, delivered.size());
    assertEachDeliveredOnceWithItsKey(server, ids);
  }
}
