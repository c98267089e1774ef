package dev.idem.okhttp;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.outbox.OutboxDispatcher;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okio.Buffer;

/**
 * Run in a child JVM by {@link RealOutageTest}: an app with an outbox that queues orders for a
 * target whose port is closed, on the real clock and with Idem's defaults (retry policy, breaker,
 * budget), the dispatcher's longest poll interval shortened to 2 s so that the test ends soon after
 * the target comes up. It waits for every order's outcome, then prints, one per line:
 * {@code submitted at=<epoch ms>} once the first order is queued (the others follow 4 s later);
 * {@code order key=<key> outcome=<...>}
 * per order; {@code journal <STATE>=<count>} per state; {@code attempts=<n>} and
 * {@code attemptsWithAnotherKey=<n>} for the attempts that left the client. Its log (slf4j-simple,
 * on the same stream) shows what the dispatcher said meanwhile.
 */
public final class OutageChild {
  private OutageChild() {}

  public static void main(String[] args) throws Exception {
    URI url = URI.create(args[0]);
    int orders = Integer.parseInt(args[1]);
    InMemoryJournal journal = new InMemoryJournal();
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    List<String> bodies = new ArrayList<>();
    List<OperationId> ids = new ArrayList<>();
    AtomicInteger attempts = new AtomicInteger();
    AtomicInteger withAnotherKey = new AtomicInteger();
    // Below Idem's interceptor: sees every attempt, the refused ones included.
    Interceptor recorder = chain -> {
      Request r = chain.request();
      Buffer body = new Buffer();
      r.body().writeTo(body);
      String sent = body.readUtf8();
      attempts.incrementAndGet();
      synchronized (bodies) {
        int i = bodies.indexOf(sent);
        if (i < 0 || !ids.get(i).key().value().equals(r.header("Idempotency-Key"))) {
          withAnotherKey.incrementAndGet();
        }
      }
      return chain.proceed(r);
    };
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(recorder).build();
    try (OutboxDispatcher outbox = OutboxDispatcher.builder(executor)
        .register("create-order", idem.transport(client))
        .maxPollInterval(Duration.ofSeconds(2))
        .build()
        .start()) {
      List<CompletableFuture<Outcome>> handles = new ArrayList<>();
      for (int i = 0; i < orders; i++) {
        if (i == 1) {
          // The first order meets the refused connections alone: too few failures for the breaker
          // to open and pause it, which is how an order used to end FAILED within 2 s. The others
          // come once the dispatcher has backed off.
          System.out.println("submitted at=" + System.currentTimeMillis());
          Thread.sleep(4_000);
        }
        String body = "{\"cart\":" + i + "}";
        Request order = Fixture.order(url, IdempotentOperation.of("create-order").withReference("cart-" + i), body);
        synchronized (bodies) {
          bodies.add(body);
          ids.add(idem.enqueue(order));
        }
        synchronized (bodies) {
          handles.add(outbox.await(ids.get(i)));
        }
      }
      System.out.println("all submitted at=" + System.currentTimeMillis());
      for (int i = 0; i < orders; i++) {
        String outcome;
        try {
          outcome = "delivered:" + handles.get(i).get(150, TimeUnit.SECONDS).key();
        } catch (ExecutionException e) {
          outcome = "ended:" + e.getCause();
        }
        System.out.println("order key=" + ids.get(i).key() + " outcome=" + outcome);
      }
    }
    for (OperationState s : OperationState.values()) {
      int in = 0;
      OperationId after = null;
      for (List<OperationRecord> page; !(page = journal.findByState(s, after, 1000)).isEmpty(); ) {
        in += page.size();
        after = page.get(page.size() - 1).id();
      }
      System.out.println("journal " + s + "=" + in);
    }
    System.out.println("attempts=" + attempts.get() + " attemptsWithAnotherKey=" + withAnotherKey.get());
  }
}
