package dev.idem.core.internal;

import dev.idem.core.Classifier;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.event.IdemListener;
import dev.idem.core.spi.Journal;
import dev.idem.core.ProtocolStatuses;
import java.time.Clock;
import java.time.Duration;
import java.util.function.DoubleSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every {@link AttemptLoop} of one executor shares.
 *
 * @param journal where operations live
 * @param classifier how attempts are classified
 * @param clock the time source
 * @param random uniform values in [0, 1) for jitter
 * @param owner this executor's owner name for leases
 * @param leaseFor how long a claim lasts
 * @param replayHeader the response header that marks a server-side replay, lower-case (so that a
 *     lookup in a snapshot's lower-case names makes no lower-case copy of it per call)
 * @param listener where events go
 * @param guard the per-host circuit breakers and retry budget
 * @param protocol which responses carry the protocol's key-reused, key-missing and in-flight signals
 * @param secrets the app's secret rule, which every request and response handed to the journal
 *     goes through
 */
public record EngineSettings(Journal journal, Classifier classifier, Clock clock, DoubleSupplier random, String owner,
    Duration leaseFor, String replayHeader, IdemListener listener, HostGuard guard, ProtocolStatuses protocol,
    SecretFilter secrets) {
  private static final Logger LOG = LoggerFactory.getLogger(EngineSettings.class);

  /**
   * Whether anyone listens: callers on the hot path test it before they build an event, which,
   * with no listener (the default), is garbage made for nobody on every call.
   */
  public boolean listening() {
    return listener != NoListener.INSTANCE;
  }

  /** Tells the listener, which must never change an operation's fate by throwing. */
  public void emit(IdemEvent event) {
    try {
      listener.onEvent(event);
    } catch (RuntimeException e) {
      LOG.warn("an IdemListener threw on {}; ignored", event.getClass().getSimpleName(), e);
    }
  }
}
