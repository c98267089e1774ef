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
   * A listener that forwards every event to each of {@code listeners}, in order, every one of them
   * even when one before it throws: a broken logging listener never blinds a metrics listener
   * after it. Once all were told, what they threw is thrown on, the first Error if any, else the
   * first RuntimeException, with the others added to it as suppressed; the executor then logs it
   * (SLF4J, WARN) and ignores it, as it does for a single listener, or handles the Error as it
   * always did. The returned listener is thread-safe if each of {@code listeners} is.
   *
   * @param listeners the listeners, none null
   * @throws NullPointerException if the list or any listener is null
   * @return a listener over a copy of the list; later changes to the list have no effect. An
   *     empty list gives {@link #none()}, so that the executor builds no event for nobody (the
   *     Spring starter passes every listener bean, often none); a list of one gives that listener
   */
  static IdemListener all(List<IdemListener> listeners) {
    List<IdemListener> copy = List.copyOf(listeners);
    copy.forEach(l -> Objects.requireNonNull(l, "listener"));
    if (copy.isEmpty()) {
      return none();
    }
    if (copy.size() == 1) {
      return copy.get(0);
    }
    return e -> EveryListener.tell(copy, l -> l.onEvent(e));
  }
}
