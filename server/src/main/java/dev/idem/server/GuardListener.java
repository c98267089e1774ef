package dev.idem.server;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Receives {@link GuardEvent}s, for metrics and logs, synchronously, on the request or purge
 * thread that caused them: implementations must be thread-safe and quick. A RuntimeException
 * thrown here is logged and ignored, so a broken listener never changes the guard's answer; on the
 * background purge's thread an Error is too, so that the purge keeps its schedule. The same style
 * as the client's {@code dev.idem.core.event.IdemListener}.
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
   * (SLF4J) and ignores it, as it does for a single listener (on a request thread an Error goes on
   * as it always did, on the purge's thread it is ignored too). The returned listener is
   * thread-safe if each of {@code listeners} is.
   *
   * @param listeners the listeners, none null
   * @throws NullPointerException if the list or any listener is null
   * @return a listener over a copy of the list; later changes to the list have no effect
   */
  static GuardListener all(List<GuardListener> listeners) {
    List<GuardListener> copy = List.copyOf(listeners);
    copy.forEach(l -> Objects.requireNonNull(l, "listener"));
    return e -> tellEach(copy, e);
  }

  private static void tellEach(List<GuardListener> listeners, GuardEvent event) {
    Throwable thrown = null;
    for (GuardListener l : listeners) {
      try {
        l.onEvent(event);
      } catch (RuntimeException | Error e) {
        thrown = withLater(thrown, e);
      }
    }
    if (thrown instanceof Error e) {
      throw e;
    }
    if (thrown != null) {
      throw (RuntimeException) thrown;
    }
  }

  /** The first Error, else the first of the others, the rest suppressed in it: none is lost. */
  private static Throwable withLater(Throwable first, Throwable later) {
    if (first == null) {
      return later;
    }
    if (first == later || Arrays.asList(first.getSuppressed()).contains(later)) {
      return first;  // one exception thrown by two listeners, or self-suppression, which throws
    }
    if (later instanceof Error && !(first instanceof Error)) {
      later.addSuppressed(first);
      return later;
    }
    first.addSuppressed(later);
    return first;
  }
}
