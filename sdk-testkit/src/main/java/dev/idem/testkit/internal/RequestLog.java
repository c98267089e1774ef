package dev.idem.testkit.internal;

import dev.idem.testkit.ReceivedRequest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Every request the server received, in arrival order, and the distinct keys among them.
 *
 * <p>Thread-safe. One lock covers both the sequence number and the append, so that the list order
 * and the sequence numbers always agree.
 */
public final class RequestLog {
  private final List<ReceivedRequest> requests = new ArrayList<>();
  private final Set<String> keys = new LinkedHashSet<>();

  /**
   * Appends a request.
   *
   * @param key the unquoted key if the header was valid, else null
   * @param headers every request header, names as sent, values in order
   * @return the logged request, with its sequence number
   */
  public synchronized ReceivedRequest append(String method, String path, String caller,
      Optional<String> keyHeader, String body, String key, Map<String, List<String>> headers) {
    ReceivedRequest r = new ReceivedRequest(requests.size() + 1, method, path, caller, keyHeader, body, headers);
    requests.add(r);
    if (key != null) {
      keys.add(key);
    }
    return r;
  }

  /** A snapshot of the requests so far. */
  public synchronized List<ReceivedRequest> requests() {
    return List.copyOf(requests);
  }

  /** A snapshot of the distinct valid keys so far, in first-seen order. */
  public synchronized Set<String> keys() {
    return Collections.unmodifiableSet(new LinkedHashSet<>(keys));
  }

  /** The number of requests so far. */
  public synchronized int size() {
    return requests.size();
  }
}
