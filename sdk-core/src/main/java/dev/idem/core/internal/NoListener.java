package dev.idem.core.internal;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.event.IdemListener;

/**
 * The listener {@link IdemListener#none()} returns: one instance, so that the executor can tell
 * that nobody listens and skip building the events of every call (see
 * {@link EngineSettings#listening()}).
 */
public enum NoListener implements IdemListener {
  INSTANCE;

  @Override
  public void onEvent(IdemEvent event) {
    // Nobody listens.
  }
}
