package dev.idem.spring.internal;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.webhooks.WebhookProcessor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the outboxes and the webhook processor with the context, and at a graceful shutdown, after
 * the web server has stopped taking and finished its requests (it stops in an earlier phase):
 * drains every outbox, all at once (each up to {@code idem.shutdown-timeout}; what is left stays
 * journaled and is delivered after the restart), and once every one has drained or given up, stops
 * the processor (an event it was running is run again later:
 * handlers are at least once), closes the executor, and flushes the journal, so that every outcome
 * told to a caller is durable before the journal closes as a bean.
 *
 * <p>The executor is closed here rather than only as a bean: synchronous calls still running on
 * the app's threads (a scheduled job's, a listener's) then start no new attempt, and close waits
 * (up to 10 seconds) for an attempt on the wire to end and be recorded while the journal is open
 * and while the clients' own resources are alive (Reactor Netty's stop in phase 0, after this
 * one, and kills the connections under an attempt). A context stopped here is not restarted with
 * Idem: the executor stays closed.
 *
 * <p>It is given only its own context's beans: in a context hierarchy a child that uses its
 * parent's executor and outbox must neither start them again nor close them when it closes.
 */
public final class IdemLifecycle implements SmartLifecycle {
  /** After the web server's graceful shutdown (DEFAULT_PHASE - 1024) and its stop (- 2048). */
  public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;
  private static final Logger LOG = LoggerFactory.getLogger(IdemLifecycle.class);

  private final List<OutboxDispatcher> outboxes;
  private final WebhookProcessor processor;
  private final IdempotentExecutor executor;
  private final Duration drain;
  private volatile boolean running;

  /**
   * @param outboxes the dispatchers (every OutboxDispatcher bean: an app may give a partner one of
   *     its own), possibly none
   * @param processor the webhook processor, or null
   * @param executor the executor, closed after every outbox has drained, its journal flushed after;
   *     or null
   * @param drain how long a shutdown waits for the outboxes, which drain at the same time
   */
  public IdemLifecycle(List<OutboxDispatcher> outboxes, WebhookProcessor processor, IdempotentExecutor executor,
      Duration drain) {
    this.outboxes = List.copyOf(outboxes);
    this.processor = processor;
    this.executor = executor;
    this.drain = drain;
  }

  @Override
  public void start() {
    if (processor != null) {
      processor.start();
    }
    Set<String> delivered = new HashSet<>();
    for (OutboxDispatcher outbox : outboxes) {
      outbox.start();
      delivered.addAll(outbox.operationNames());
    }
    if (!outboxes.isEmpty() && executor != null) {
      // Every dispatcher's names: a name another dispatcher delivers will be sent.
      UndeliveredNames.warn(executor, delivered);
    }
    running = true;
  }

  @Override
  public void stop() {
    CompletableFuture<Void> done = new CompletableFuture<>();
    stop(() -> done.complete(null));
    done.join();
  }

  @Override
  public void stop(Runnable callback) {
    // Every outbox at once, so that the shutdown waits drain at most, not drain per outbox; the
    // executor closes only after the last one has drained or given up, as a delivery in progress
    // needs it (and the journal) open to record its outcome.
    List<CompletableFuture<Boolean>> each = new ArrayList<>();
    for (OutboxDispatcher outbox : outboxes) {
      each.add(shutdown(outbox));
    }
    CompletableFuture<Void> drained = CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
    // On a thread of its own: an outbox completes its future on its poller thread, which its
    // shutdown interrupts, and the executor's close below waits (bounded) for calls in progress.
    drained.whenCompleteAsync((none, error) -> {
      try {
        if (each.stream().anyMatch(f -> Boolean.FALSE.equals(f.getNow(true)))) {
          LOG.info("Idem: {} did not drain within {}; what is left stays journaled and is delivered after"
              + " the restart, with the same keys", outboxes.size() == 1 ? "the outbox" : "an outbox", drain);
        }
        if (processor != null) {
          processor.close();
        }
        if (executor != null) {
          executor.close(); // waits for the synchronous calls in progress; see the class comment
        }
        if (executor != null && executor.journal() instanceof JdbcJournal jdbc) {
          jdbc.flush();
        }
      } catch (Exception | Error e) {
        LOG.warn("Idem: shutdown step failed; the journal recovers at the next start", e);
      } finally {
        running = false;
        callback.run();
      }
    }, work -> {
      Thread t = new Thread(work, "idem-shutdown");
      t.setDaemon(true);
      t.start();
    });
  }

  /**
   * One outbox's drain, false if it failed: a failure is that outbox's alone, logged, and the
   * shutdown goes on to close the executor once the others are done.
   */
  private CompletableFuture<Boolean> shutdown(OutboxDispatcher outbox) {
    try {
      return outbox.shutdown(drain).exceptionally(e -> {
        LOG.warn("Idem: an outbox's drain failed; what is left stays journaled and is delivered after the restart", e);
        return false;
      });
    } catch (RuntimeException e) {
      LOG.warn("Idem: an outbox's drain failed; what is left stays journaled and is delivered after the restart", e);
      return CompletableFuture.completedFuture(false);
    }
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }
}
