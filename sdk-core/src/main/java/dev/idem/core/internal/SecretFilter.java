package dev.idem.core.internal;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Decides what of a request, and of a response, may be journaled: drops secret headers from both,
 * and refuses a request whose URI carries user info or a secret-looking query parameter (both are
 * part of the URI, which is journaled and logged whole, so it cannot be stripped without changing
 * the request; see {@code IdempotentExecutor.Builder#allowQueryParameters}). A response is only
 * kept, never sent again, so its copy in the journal can lose what the caller's copy has.
 * Immutable and thread-safe.
 */
public final class SecretFilter {
  private final Set<String> added;
  private final Set<String> allowedHeaders;
  private final Set<String> allowedQuery;

  /**
   * @param added header names (any case) that are secrets besides the default rule
   * @param allowedHeaders header names (any case) the app explicitly allows to be journaled
   * @param allowedQuery query parameter names (exact) the app explicitly allows in journaled URIs
   */
  public SecretFilter(Set<String> added, Set<String> allowedHeaders, Set<String> allowedQuery) {
    this.added = lower(added);
    this.allowedHeaders = lower(allowedHeaders);
    this.allowedQuery = Set.copyOf(allowedQuery);
  }

  private static Set<String> lower(Set<String> names) {
    return names.stream().map(n -> n.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
  }

  /** Whether a header (any case) is kept out of the journal. */
  public boolean isSecretHeader(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    if (added.contains(n)) {
      return true;
    }
    return !allowedHeaders.contains(n) && RequestSnapshot.isSecretByDefault(n);
  }

  /** The snapshot to journal: {@code request} without its secret headers. */
  public RequestSnapshot persistable(RequestSnapshot request) {
    List<String> drop = null; // made only for a request that has a secret: most have none
    for (String h : request.headers().keySet()) {
      if (isSecretHeader(h)) {
        if (drop == null) {
          drop = new ArrayList<>();
        }
        drop.add(h);
      }
    }
    return drop == null ? request : request.withoutHeaders(drop);
  }

  /**
   * The response to journal: {@code response} without the headers {@link #isSecretHeader} names.
   * The caller keeps the response it was given; only the journal's copy lacks them, so an outcome
   * read back from the journal (a repeated call, a resume, after a restart) lacks them too.
   *
   * @param response a response, or null
   * @return {@code response} itself when it has nothing to leave out (most: then nothing is
   *     allocated), else a copy without it; null for null
   */
  public ResponseSnapshot persistable(ResponseSnapshot response) {
    if (response == null || !hasSecret(response.headers())) {
      return response;
    }
    Map<String, List<String>> kept = new LinkedHashMap<>();
    response.headers().forEach((name, values) -> {
      if (!isSecretHeader(name)) {
        kept.put(name, values);
      }
    });
    return new ResponseSnapshot(response.status(), kept, response.body());
  }

  /**
   * {@code t} with its response made {@link #persistable(ResponseSnapshot) persistable}: every
   * transition the executor hands a journal goes through here.
   *
   * @return {@code t} itself when its response (if any) has nothing to leave out
   */
  public Transition persistable(Transition t) {
    ResponseSnapshot kept = persistable(t.response());
    return kept == t.response() ? t : new Transition(t.target(), t.at(), t.nextAttemptAt(), kept, t.reason());
  }

  /**
   * Whether any header needs leaving out. Walks the names only (a key set iterator, no entry
   * objects), since it runs for every response the executor journals and most have nothing to hide.
   */
  private boolean hasSecret(Map<String, List<String>> headers) {
    for (String name : headers.keySet()) {
      if (isSecretHeader(name)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Refuses a URI that carries a credential the journal would keep in clear: user info
   * ({@code https://user:password@host/}), or a query parameter with a secret-looking name that the
   * app did not allow.
   *
   * @throws IllegalArgumentException naming the parameter (never its value, nor the user info) and
   *     the way out
   */
  public void checkUri(URI uri, String operation) {
    if (uri.getRawUserInfo() != null) {
      // HTTP clients do not send it, but the journal, its listings and the logs would keep it.
      throw new IllegalArgumentException("operation " + operation + ": the request URI carries user info (a"
          + " credential, such as user:password@), which would be journaled in clear with the URI; nothing was"
          + " journaled or sent. Send the credential in a header that the app's transport adds on every attempt"
          + " (an Authorization header is never journaled)");
    }
    String query = uri.getRawQuery();
    if (query == null || query.isEmpty()) {
      return;
    }
    for (String pair : query.split("&")) {
      int eq = pair.indexOf('=');
      String raw = eq < 0 ? pair : pair.substring(0, eq);
      String name;
      try {
        name = URLDecoder.decode(raw, StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        name = raw;
      }
      if (!allowedQuery.contains(name) && RequestSnapshot.isSecretByDefault(name)) {
        throw new IllegalArgumentException("operation " + operation + ": query parameter '" + name
            + "' looks like a credential, and the request URI (query included) would be journaled in clear;"
            + " nothing was journaled or sent. Send it in a header that the app's transport adds on every"
            + " attempt, or allow it with IdempotentExecutor.builder().allowQueryParameters(Set.of(\"" + name
            + "\"))");
      }
    }
  }
}
