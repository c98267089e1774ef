package dev.idem.core.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/** A failure's cause chain, walked safely. */
public final class Causes {
  private Causes() {}

  /**
   * {@code failure} and its causes, each once, outermost first. A chain may loop through more than
   * one exception ({@code initCause} refuses only a self-cause, which {@code getCause} already hides),
   * and following such a loop round would hang whoever classifies the failure.
   *
   * @param failure a failure, or null (an empty list)
   * @return the chain, with no exception twice
   */
  public static List<Throwable> of(Throwable failure) {
    List<Throwable> chain = new ArrayList<>(4);
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
      chain.add(t);
    }
    return chain;
  }
}
