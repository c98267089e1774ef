package dev.idem.jdbc.internal;

import dev.idem.core.OperationId;
import dev.idem.core.spi.RequestSnapshot;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;

/**
 * The headers a journal never stores: {@link RequestSnapshot#DEFAULT_SECRET_HEADERS} and the app's
 * own (lower case). Stripped even when the caller forgot to, since a journaled credential would
 * outlive its use and sit in a file or table readable by whoever can read the journal.
 */
public final class SecretHeaders {
  private final String journalName;
  /** The default secret headers and the app's own. */
  private final Set<String> excluded;
  private final Logger log;
  /** Warn once per journal: the cause is a setup mistake, not a per-call event. */
  private final AtomicBoolean warned = new AtomicBoolean();

  /**
   * @param excluded more header names (lower case) never stored
   * @param log the journal's logger, so that the warning appears under the public journal's name
   */
  public SecretHeaders(String journalName, Collection<String> excluded, Logger log) {
    this.journalName = journalName;
    Set<String> all = new TreeSet<>(RequestSnapshot.DEFAULT_SECRET_HEADERS);
    all.addAll(excluded);
    this.excluded = Set.copyOf(all);
    this.log = log;
  }

  /** {@code request} without its secret headers (the same instance if it has none). */
  public RequestSnapshot strip(RequestSnapshot request, OperationId id) {
    Set<String> present = null;
    for (String h : request.headers().keySet()) {
      if (excluded.contains(h)) {
        if (present == null) {
          present = new TreeSet<>();
        }
        present.add(h);
      }
    }
    if (present == null) {
      return request;
    }
    if (warned.compareAndSet(false, true)) {
      log.warn("Idem journal {}: request snapshot of {} carried secret headers {}; they were not journaled"
          + " (re-apply them per attempt with an interceptor or header supplier)", journalName, id, present);
    } else {
      log.debug("Idem journal {}: stripped secret headers {} from {}", journalName, present, id);
    }
    return request.withoutHeaders(present);
  }

  /** Every header name left out of a stored response (made once: every completion asks). */
  public Set<String> forResponses() {
    return excluded;
  }
}
