package dev.idem.spring.internal;

import java.util.function.Supplier;
import org.springframework.beans.factory.BeanCreationNotAllowedException;

/**
 * Whether the context that made Idem's beans has destroyed them: shared by the stand-ins a client
 * built during startup gets ({@link DeferredInterceptor}, the WebClient filter made at first use),
 * which look Idem's beans up at the client's first request. Once a bean factory's destruction has
 * ended it takes creations again, so a lookup then would make a second executor (and journal pool)
 * that nothing closes, and send the call through it; while the destruction runs, Spring refuses
 * with a message naming none of Idem. A lookup after (or during) it fails here instead, before
 * anything is made or sent. Until then (the context's closed event, the lifecycle's stop), a lookup
 * finds the beans that exist, as a call through a client resolved earlier uses them. Thread-safe.
 */
final class BeansGone {
  private volatile boolean gone;

  /** From now on every lookup fails: the context is destroying its beans, or has. */
  void set() {
    gone = true;
  }

  /** Whether a lookup would fail now. */
  boolean isSet() {
    return gone;
  }

  /**
   * {@code lookup}'s bean, unless the context has destroyed its beans.
   *
   * @throws IllegalStateException if it has, or is destroying them: the call is not sent
   */
  <T> T lookUp(Supplier<T> lookup) {
    if (gone) {
      throw closed(null);
    }
    try {
      return lookup.get();
    } catch (BeanCreationNotAllowedException e) {
      throw closed(e);
    }
  }

  private static IllegalStateException closed(Exception cause) {
    return new IllegalStateException("Idem: the Spring context that made Idem's executor has closed, so this call"
        + " was not sent (nothing was journaled); a client that context built cannot send through Idem after it"
        + " closes", cause);
  }
}
