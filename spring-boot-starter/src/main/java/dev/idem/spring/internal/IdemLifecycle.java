package dev.idem.spring.internal;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.webhooks.WebhookProcessor;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the outbox and the webhook processor with the context, and at a graceful shutdown, after
 * the web server has stopped taking and finished its requests (it stops in an earlier phase):
 * drains the outbox (up to {@code idem.shutdown-timeout}; what is left stays journaled and is
 * delivered after the restart), stops the processor (an event it was running is run again later:
 * handlers are at least once), closes the executor, and flushes the journal, so that every outcome
 * told to a caller is durable before the journal closes as a bean.
 *
 * <p>The executor is closed here rather than only as a bean: synchronous calls still running on
 * the app's threads (a scheduled job's, a listener's) then start no new attempt, and close waits
 * (up to 10 seconds) for an attempt on the wire to end and be recorded while the journal is open
 * and while the clients' own resources are alive (Reactor Netty's stop in phase 0, after this
 * one, and kills the connections under an attempt). A context stopped here is not restarted with
 * Idem: the executor stays closed.
 */
public final class IdemLifecycle implements SmartLifecycle {
  /** After the web server's graceful shutdown (DEFAULT_PHASE - 1024) and its stop (- 2048). */
  public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;
  private static final Logger LOG = LoggerFactory.getLogger(IdemLifecycle.class);

  private final OutboxDispatcher outbox;
  private final WebhookProcessor processor;
  private final IdempotentExecutor executor;
  private final Duration drain;
  private volatile boolean running;

  /**
   * @param outbox the dispatcher, or null
   * @param processor the webhook processor, or null
   * @param executor the executor, closed after the outbox has drained, its journal flushed after;
   *     or null
   * @param drain how long a shutdown waits for the outbox
   */
  public IdemLifecycle(OutboxDispatcher outbox, WebhookProcessor processor, IdempotentExecutor executor,
      Duration drain) {
    this.outbox = outbox;
    this.processor = processor;
    this.executor = executor;
    this.drain = drain;
  }

  @Override
  public void start() {
    if (processor != null) {
      processor.start();
    }
    if (outbox != null) {
      outbox.start();
      if (executor != null) {
        UndeliveredNames.warn(executor, outbox.operationNames());
      }
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
    CompletableFuture<Boolean> drained = outbox == null ? CompletableFuture.completedFuture(true)
        : outbox.shutdown(drain);
    // On a thread of its own: the outbox completes `drained` on its poller thread, which its
    // shutdown interrupts, and the executor's close below waits (bounded) for calls in progress.
    drained.whenCompleteAsync((all, error) -> {
      try {
        if (Boolean.FALSE.equals(all)) {
          LOG.info("Idem: the outbox did not drain within {}; what is left stays journaled and is delivered after"
              + " the restart, with the same keys", drain);
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

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }
}
