package dev.idem.server;

import dev.idem.core.ProtocolStatuses;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Scheduler;
import dev.idem.server.spi.IdempotencyStore;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executor;

/**
 * A guard's settings: the builder fills one, and each guard keeps a frozen copy, so that a later
 * call on the builder changes no guard it built.
 */
final class GuardSettings implements Cloneable {
  /** The default listener: with it, the guard builds no event, since nobody would hear it. */
  static final GuardListener NO_LISTENER = GuardListener.none();
  /** Stored and replayed with every body, whatever the allowlist: it says how the body's bytes are coded. */
  static final String CONTENT_ENCODING = "content-encoding";
  /** Stored and replayed whenever the stored answer carries it, whatever the allowlist: it qualifies the status. */
  static final String RETRY_AFTER = "retry-after";

  IdempotencyStore store;
  Clock clock = Clock.systemUTC();
  Scheduler scheduler;
  Executor storeExecutor;
  String keyHeader = IdempotencyGuard.DEFAULT_KEY_HEADER;
  KeyScope scope = KeyScope.CALLER_AND_ROUTE;
  Set<String> keyRequiredMethods = Set.of("POST", "PATCH");
  Map<String, RoutePolicy> routes = new HashMap<>();
  Duration retention = Duration.ofHours(24);
  Duration lease = Duration.ofSeconds(30);
  Duration inFlightRetryAfter = Duration.ofSeconds(1);
  // The client's default status (the IETF draft's), so that the two halves speak one protocol.
  int mismatchStatus = ProtocolStatuses.ietfDraft().keyReusedStatus();
  boolean replayMarker = true;
  StoragePolicy storagePolicy = StoragePolicy.STORE_ALL_BUT_TRANSIENT;
  FingerprintMode fingerprintMode = FingerprintMode.CANONICAL_JSON;
  int maxRequestBody = 1 << 20;
  int maxCapturedBody = 1 << 20;
  Set<String> replayHeaders = Set.of("content-type", "content-language", "content-location", "location",
      "etag", "last-modified");
  Set<String> secretHeaders = RequestSnapshot.DEFAULT_SECRET_HEADERS;
  Duration purgeInterval = Duration.ofMinutes(10);
  GuardRenderer renderer = GuardRenderer.problemJson();
  GuardListener listener = NO_LISTENER;
  Duration inFlightWait = Duration.ZERO;
  String requestTimeoutHeader;
  String instanceId;
  // Derived once by frozen(), not per request.
  Duration renewEvery;
  RoutePolicy keyedRoute;
  RoutePolicy unkeyedRoute;

  GuardSettings frozen() {
    GuardSettings f;
    try {
      f = (GuardSettings) clone();
    } catch (CloneNotSupportedException e) {
      throw new AssertionError(e);
    }
    f.keyRequiredMethods = Set.copyOf(keyRequiredMethods);
    f.routes = Map.copyOf(routes);
    Set<String> allowed = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    allowed.addAll(replayHeaders);
    // The client's rule for what is a secret, so that no store of Idem keeps a credential.
    allowed.removeIf(h -> secretHeaders.contains(h) || RequestSnapshot.isSecretByDefault(h));
    // Kept whatever the allowlist says: it describes the stored body's bytes, which a replay
    // without it sends as if they were not coded (gzip bytes labelled application/json).
    allowed.add(CONTENT_ENCODING);
    // Kept too: it qualifies the stored status (a 503 or 429 a policy stores), and a replay without
    // it drops the server's pacing.
    allowed.add(RETRY_AFTER);
    f.replayHeaders = Collections.unmodifiableSet(allowed);
    f.renewEvery = lease.dividedBy(3);
    f.keyedRoute = new RoutePolicy(true, retention);
    f.unkeyedRoute = new RoutePolicy(false, retention);
    return f;
  }
}
