package dev.idem.webhooks;

import dev.idem.core.event.EveryListener;
import java.util.List;
import java.util.Objects;

/**
 * Receives {@link WebhookActivity}s from the receiver and the processor, for metrics and logs,
 * synchronously, on the request or worker thread that caused them: implementations must be
 * thread-safe and quick. What is thrown here is logged and ignored, an Error included (a metrics
 * binder built against another Micrometer throws NoSuchMethodError), so a broken listener never
 * changes the answer to a sender nor an event's fate; only the JVM's own failure (a
 * VirtualMachineError other than StackOverflowError, such as OutOfMemoryError) is passed on, and
 * stops the processor's background processing as any Error outside a handler does. The same style
 * as the client's {@code dev.idem.core.event.IdemListener}.
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
   * A listener that forwards every activity to each of {@code listeners}, in order, every one of
   * them even when one before it throws: a broken logging listener never blinds a metrics listener
   * after it. Once all were told, what they threw is thrown on, the first Error if any, else the
   * first RuntimeException, with the others added to it as suppressed; the receiver and the
   * processor then log it (SLF4J, WARN, logger {@code dev.idem.webhooks.WebhookListener}) and
   * ignore it, as they do for a single listener (the JVM's own failure excepted, as above). The
   * returned listener is thread-safe if each of {@code listeners} is.
   *
   * @param listeners the listeners, none null
   * @throws NullPointerException if the list or any listener is null
   * @return a listener over a copy of the list; later changes to the list have no effect
   */
  static WebhookListener all(List<WebhookListener> listeners) {
    List<WebhookListener> copy = List.copyOf(listeners);
    copy.forEach(l -> Objects.requireNonNull(l, "listener"));
    return a -> EveryListener.tell(copy, l -> l.onEvent(a));
  }
}
