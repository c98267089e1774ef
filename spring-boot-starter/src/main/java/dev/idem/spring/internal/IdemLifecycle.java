package dev.idem.spring.internal;

import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.spi.Journal;
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
 * handlers are at least once), and flushes the journal, so that every outcome told to a caller is
 * durable before the executor and the journal close as beans.
 */
public final class IdemLifecycle implements SmartLifecycle {
  /** After the web server's graceful shutdown (DEFAULT_PHASE - 1024) and its stop (- 2048). */
  public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;
  private static final Logger LOG = LoggerFactory.getLogger(IdemLifecycle.class);

  private final OutboxDispatcher outbox;
  private final WebhookProcessor processor;
  private final Journal journal;
  private final Duration drain;
  private volatile boolean running;

  /**
   * @param outbox the dispatcher, or null
   * @param processor the webhook processor, or null
   * @param journal the journal
   * @param drain how long a shutdown waits for the outbox
   */
  public IdemLifecycle(OutboxDispatcher outbox, WebhookProcessor processor, Journal journal, Duration drain) {
    this.outbox = outbox;
    this.processor = processor;
    this.journal = journal;
    this.drain = drain;
  }

  @Override
  public void start() {
    if (processor != null) {
      processor.start();
    }
    if (outbox != null) {
      outbox.start();
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
    drained.whenComplete((all, error) -> {
      try {
        if (Boolean.FALSE.equals(all)) {
          LOG.info("Idem: the outbox did not drain within {}; what is left stays journaled and is delivered after"
              + " the restart, with the same keys", drain);
        }
        if (processor != null) {
          processor.close();
        }
        if (journal instanceof JdbcJournal jdbc) {
          jdbc.flush();
        }
      } catch (Exception | Error e) {
        LOG.warn("Idem: shutdown step failed; the journal recovers at the next start", e);
      } finally {
        running = false;
        callback.run();
      }
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
