package dev.idem.webhooks.internal;

import dev.idem.webhooks.WebhookActivity;
import dev.idem.webhooks.WebhookListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Tells a listener, so that what it throws never changes an answer or an event's fate. */
public final class Listeners {
  private static final Logger LOG = LoggerFactory.getLogger(WebhookListener.class);

  private Listeners() {}

  /** Calls {@code listener}; a RuntimeException is logged and ignored (an Error is not caught). */
  public static void tell(WebhookListener listener, WebhookActivity activity) {
    try {
      listener.onEvent(activity);
    } catch (RuntimeException e) {
      LOG.warn("a webhook listener threw on {}; ignored", activity.getClass().getSimpleName(), e);
    }
  }
}
