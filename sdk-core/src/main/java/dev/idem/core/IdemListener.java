package dev.idem.core;

import java.util.List;
import java.util.Objects;

/**
 * Receives {@link IdemEvent}s, synchronously, on the thread that caused them. Implementations must
 * be thread-safe and quick; an exception they throw is logged and otherwise ignored, so a broken
 * listener never changes an operation's fate.
 */
@FunctionalInterface
public interface IdemListener {
  /** Called for every event. */
  void onEvent(IdemEvent event);

  /** A listener that ignores everything; the default. */
  static IdemListener none() {
    return e -> {};
  }

  /** A listener that forwards every event to each of {@code listeners}, in order. */
  static IdemListener all(List<IdemListener> listeners) {
    List<IdemListener> copy = List.copyOf(listeners);
    copy.forEach(l -> Objects.requireNonNull(l, "listener"));
    return e -> copy.forEach(l -> l.onEvent(e));
  }
}
