package dev.idem.webhooks;

import java.util.List;
import java.util.Objects;

/**
 * Receives {@link WebhookActivity}s from the receiver and the processor, for metrics and logs,
 * synchronously, on the request or worker thread that caused them: implementations must be
 * thread-safe and quick. A RuntimeException thrown here is logged and ignored, so a broken listener
 * never changes the answer to a sender nor an event's fate. The same style as the client's
 * {@code dev.idem.core.event.IdemListener}.
 */
@FunctionalInterface
public interface WebhookListener {
  /**
   * Called for every activity.
   *
   * @param activity what happened
   */
  void onEvent(WebhookActivity activity);

  /**
   * A listener that ignores everything; the default.
   *
   * @return a listener that does nothing
   */
  static WebhookListener none() {
    return a -> {};
  }

  /**
   * A listener that forwards every activity to each of {@code listeners}, in order.
   *
   * @param listeners the listeners, none null
   * @throws NullPointerException if the list or any listener is null
   * @return a listener over a copy of the list; later changes to the list have no effect
   */
  static WebhookListener all(List<WebhookListener> listeners) {
    List<WebhookListener> copy = List.copyOf(listeners);
    copy.forEach(l -> Objects.requireNonNull(l, "listener"));
    return a -> copy.forEach(l -> l.onEvent(a));
  }
}
