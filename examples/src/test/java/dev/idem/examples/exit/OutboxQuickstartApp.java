package dev.idem.examples.exit;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;

/**
 * The README's outbox quickstart (OkHttp: {@code idem.enqueue}, {@code OutboxDispatcher},
 * {@code outbox.await}) as a new user copies it into a {@code main}: nothing is closed, and main
 * ends as {@link AppArgs#ending()} says.
 *
 * <p>Sending: enqueues every order, then waits for each outcome, but at most
 * {@link AppArgs#awaitOutcomes()} in all (the README's {@code await(id).join()} would wait forever
 * for an order that, as it should, stays PENDING while the target is down); an order with no
 * outcome by then is printed as {@code WAITING}. Resuming: a new dispatcher, with the outcome
 * callbacks that confirm or flag each order, runs until it has reported as many outcomes as the
 * journal held unsettled operations at startup (at most 20 s).
 *
 * <p>The one change to the quickstart: the executor is built with {@code IdemOkHttp.builder} and a
 * short retry policy, because the dispatcher delivers with the executor's policy (an operation's
 * own is not journaled).
 */
public final class OutboxQuickstartApp {
  private OutboxQuickstartApp() {
  }

  public static void main(String[] args) throws Exception {
    AppArgs app = AppArgs.parse(args);
    Orders orders = new Orders(app.confirmations());

    JdbcJournal journal = JdbcJournal.openEmbedded(app.dir());
    IdemOkHttp idem = IdemOkHttp.builder(
        IdempotentExecutor.builder().journal(journal).retryPolicy(AppArgs.POLICY).build()).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();

    if (app.resume()) {
      long backlog = journal.count(OperationState.PENDING) + journal.count(OperationState.IN_FLIGHT);
      CountDownLatch outcomes = new CountDownLatch((int) backlog);
      OutboxDispatcher.builder(idem.executor())
          .register(AppArgs.OPERATION, idem.transport(client),
              outcome -> {
                orders.confirm(outcome.key());
                outcomes.countDown();
              },
              failure -> {
                orders.flag(failure.key(), failure.state());
                outcomes.countDown();
              })
          .build()
          .start();
      boolean settled = outcomes.await(20, TimeUnit.SECONDS);
      System.out.println("RESUMED backlog=" + backlog + " settled=" + settled);
    } else {
      OutboxDispatcher outbox = OutboxDispatcher.builder(idem.executor())
          .register(AppArgs.OPERATION, idem.transport(client))
          .build()
          .start();
      List<OperationId> ids = new ArrayList<>();
      for (int i = 0; i < app.orders(); i++) {
        Request order = new Request.Builder().url(app.url())
            .post(RequestBody.create(AppArgs.json(i), MediaType.get("application/json")))
            .tag(IdempotentOperation.class, IdempotentOperation.of(AppArgs.OPERATION))
            .build();
        ids.add(idem.enqueue(order));
      }
      long deadline = System.nanoTime() + app.awaitOutcomes().toNanos();
      for (OperationId id : ids) {
        try {
          Outcome outcome = outbox.await(id).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
          orders.told(id.key(), OperationState.SUCCEEDED);
          orders.confirm(outcome.key());
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof OperationException failure)) {
            throw e;
          }
          orders.told(id.key(), failure.state());
        } catch (TimeoutException e) {
          orders.told(id.key(), "WAITING");
        }
      }
    }
    app.ending().end();
  }
}
