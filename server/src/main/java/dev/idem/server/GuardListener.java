package dev.idem.server;

import dev.idem.core.event.EveryListener;
import java.util.List;
import java.util.Objects;

/**
 * Receives {@link GuardEvent}s, for metrics and logs, synchronously, on the request or purge
 * thread that caused them: implementations must be thread-safe and quick. What is thrown here is
 * logged and ignored, an Error included (a metrics binder built against another Micrometer throws
 * NoSuchMethodError), so a broken listener never changes the guard's answer and the purge keeps its
 * schedule; only the JVM's own failure (a VirtualMachineError other than StackOverflowError, such
 * as OutOfMemoryError) is passed on, on a request's thread (on the purge's thread, where no one
 * would see it, it is logged too). The same style as the client's
 * {@code dev.idem.core.event.IdemListener}.
 */
@FunctionalInterface
public interface GuardListener {
  /**
   * Called for every event.
   *
   * @param event what happened
   */
  void onEvent(GuardEvent event);

  /**
   * A listener that ignores everything; the default.
   *
   * @return a listener that does nothing
   */
  static GuardListener none() {
    return e -> {};
  }

  /**
   * A listener that forwards every event to each of {@code listeners}, in order, every one of them
   * even when one before it throws: a broken logging listener never blinds a metrics listener
   * after it. Once all were told, what they threw is thrown on, the first Error if any, else the
   * first RuntimeException, with the others added to it as suppressed; the guard then logs it
   * (SLF4J) and ignores it, as it does for a single listener (the JVM's own failure excepted, as
   * above). The returned listener is
   * thread-safe if each of {@code listeners} is.
   *
   * @param listeners the listeners, none null
   * @throws NullPointerException if the list or any listener is null
   * @return a listener over a copy of the list; later changes to the list have no effect
   */
  static GuardListener all(List<GuardListener> listeners) {
    List<GuardListener> copy = List.copyOf(listeners);
    copy.forEach(l -> Objects.requireNonNull(l, "listener"));
    return e -> EveryListener.tell(copy, l -> l.onEvent(e));
  }
}
