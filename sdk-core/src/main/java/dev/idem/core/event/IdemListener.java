package dev.idem.core.event;

import dev.idem.core.internal.NoListener;
import java.util.List;
import java.util.Objects;

/**
 * Receives {@link IdemEvent}s, synchronously, on the thread that caused them. Implementations must
 * be thread-safe and quick; an exception they throw is logged and otherwise ignored, so a broken
 * listener never changes an operation's fate.
 */
@FunctionalInterface
public interface IdemListener {
  /**
   * Called for every event.
   *
   * @param event what happened
   */
  void onEvent(IdemEvent event);

  /**
   * A listener that ignores everything; the default. The executor does not build the events of a
   * call that only this listener would hear.
   *
   * @return a listener that does nothing, always the same instance
   */
  static IdemListener none() {
    return NoListener.INSTANCE;
  }

  /**
   * A listener that forwards every event to each of {@code listeners}, in order.
   *
   * @param listeners the listeners, none null
   * @throws NullPointerException if the list or any listener is null
   * @return a listener over a copy of the list; later changes to the list have no effect
   */
  static IdemListener all(List<IdemListener> listeners) {
    List<IdemListener> copy = List.copyOf(listeners);
    copy.forEach(l -> Objects.requireNonNull(l, "listener"));
    return e -> copy.forEach(l -> l.onEvent(e));
  }
}
