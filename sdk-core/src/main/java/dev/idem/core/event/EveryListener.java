package dev.idem.core.event;

import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * How Idem's listener composites ({@link IdemListener#all}, and the server guard's and the webhook
 * receiver's {@code all}) tell several listeners one event: every one of them, even after one
 * throws, so that a broken logging listener never blinds a metrics listener after it. Shared so
 * that the three composites cannot drift apart. Stateless and thread-safe.
 */
public final class EveryListener {
  private EveryListener() {
  }

  /**
   * Tells each listener, in order, then throws on what they threw: the first Error if any, else
   * the first RuntimeException, with the other failures added to it as suppressed, so none is
   * lost. A checked exception cannot occur ({@code tell} is a Consumer).
   *
   * @param listeners the listeners, in order
   * @param tell what to do with each, usually {@code l -> l.onEvent(event)}
   * @param <L> the listener type
   * @throws RuntimeException the first one a listener threw, if no listener threw an Error
   * @throws Error the first Error a listener threw
   */
  public static <L> void tell(List<? extends L> listeners, Consumer<? super L> tell) {
    Throwable thrown = null;
    for (L l : listeners) {
      try {
        tell.accept(l);
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
