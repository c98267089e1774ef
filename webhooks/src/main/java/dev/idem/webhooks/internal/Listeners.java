package dev.idem.webhooks.internal;

import dev.idem.webhooks.WebhookActivity;
import dev.idem.webhooks.WebhookListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Tells a listener, so that what it throws never changes an answer or an event's fate. */
public final class Listeners {
  private static final Logger LOG = LoggerFactory.getLogger(WebhookListener.class);

  private Listeners() {}

  /**
   * Calls {@code listener}; what it throws is logged and ignored, an Error included: a metrics
   * binder built against another Micrometer throws NoSuchMethodError on every activity, and after
   * the durable accept that would replace the sender's 200 (a redelivery, then a duplicate). The
   * JVM's own failure is passed on (the processor then stops, as for any Error outside a handler).
   */
  public static void tell(WebhookListener listener, WebhookActivity activity) {
    try {
      listener.onEvent(activity);
    } catch (RuntimeException | Error e) {
      if (isFatal(e)) {
        throw e;
      }
      LOG.warn("a webhook listener threw on {}; ignored", activity.getClass().getSimpleName(), e);
    }
  }

  /**
   * Whether {@code e} is the JVM's own failure, after which nothing more should run on its account:
   * every VirtualMachineError but StackOverflowError (whose stack has unwound by the time it is
   * caught here), the rule of sdk-core's {@code AttemptLoop.isFatal}. Kept here, not shared with
   * sdk-core: no module uses another's internals. Any other Error (a LinkageError, an
   * AssertionError) is the listener's own failure, as a RuntimeException is.
   */
  private static boolean isFatal(Throwable e) {
    return e instanceof VirtualMachineError && !(e instanceof StackOverflowError);
  }
}
