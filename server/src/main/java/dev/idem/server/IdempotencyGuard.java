package dev.idem.server;

import dev.idem.core.Fingerprint;
import dev.idem.core.Fingerprinter;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Scheduler;
import dev.idem.server.internal.KeyParser;
import dev.idem.server.internal.Problems;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server half of the idempotency protocol (seed 000), for any framework: an atomic claim per
 * operation, a fingerprint check, a stored result replayed with a marker, leases with fencing, and
 * a retention window. The Servlet and JDK HttpServer adapters drive it; so can any other.
 *
 * <p>For each request, an adapter calls {@link #admit}; on {@link Admission.Proceed} it runs the
 * handler and passes its response to {@link #complete} (or calls {@link #abandon} if the handler
 * threw); on {@link Admission.Respond} it sends the guard's response; on
 * {@link Admission.Unguarded} it runs the handler as if the guard were not there.
 *
 * <p>The defaults follow the IETF Idempotency-Key draft:
 * <ul>
 *   <li>The key header is {@value #DEFAULT_KEY_HEADER}, a bare token or an RFC 8941 quoted string,
 *       1 to 255 printable ASCII characters. A malformed key gets 400.</li>
 *   <li>POST and PATCH require a key (400 without one); other methods run unguarded without a key,
 *       and are guarded with one. Per-route {@link RoutePolicy policies} override this.</li>
 *   <li>A key is scoped per caller and route ({@link KeyScope#CALLER_AND_ROUTE}).</li>
 *   <li>A key reused with another payload gets 422; the fingerprint is sdk-core's
 *       {@link Fingerprinter} (RFC 8785 canonical JSON, raw bytes for other bodies) over method,
 *       path and query, and the body as sent.</li>
 *   <li>A repeat while the first request runs gets 409 with {@code Retry-After: 1}.</li>
 *   <li>A repeat after it gets the stored status, the allowlisted headers and the body, with
 *       {@value #REPLAYED_HEADER}{@code : true}.</li>
 *   <li>2xx, 3xx and 4xx results are stored; a 5xx or a thrown handler releases the claim.</li>
 *   <li>A claim holds a 30 s lease, renewed every 10 s while the handler runs. After a crash the
 *       lease expires and the next request with the key runs the handler again. A handler whose
 *       lease expired cannot store its result: {@link #complete} returns
 *       {@link CompletionResult#REFUSED}.</li>
 *   <li>Results are kept for 24 h from completion, then purged (every 10 minutes); after retention
 *       the key is new again and a repeat runs the handler again.</li>
 *   <li>Request bodies over 1 MiB get 413 and claim nothing. Response bodies over 1 MiB go to the
 *       first caller in full but are not stored: the operation is recorded as done with its status
 *       and allowlisted headers, and a replay sends that status and those headers with an empty
 *       body, no {@code Content-Type}, and {@value #REPLAY_BODY_HEADER}{@code : omitted}. The
 *       handler never runs twice for it; a client that needs the representation fetches it (from
 *       {@code Location}, say).</li>
 * </ul>
 *
 * <p>Thread-safe. Close it to stop its lease renewals and purge job.
 */
public final class IdempotencyGuard implements AutoCloseable {
  /** The default name of the key header. */
  public static final String DEFAULT_KEY_HEADER = "Idempotency-Key";
  /** The header that marks a replayed result, as the IETF draft and Stripe name it. */
  public static final String REPLAYED_HEADER = "Idempotent-Replayed";
  /** Sent on a replay whose body was over the capture cap and was not stored, with value {@code omitted}. */
  public static final String REPLAY_BODY_HEADER = "Idempotent-Replay-Body";

  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyGuard.class);

  private final IdempotencyStore store;
  private final Clock clock;
  private final Scheduler scheduler;
  private final ScheduledThreadPoolExecutor ownedExecutor;
  private final String keyHeader;
  private final KeyScope scope;
  private final Set<String> keyRequiredMethods;
  private final Map<String, RoutePolicy> routes;
  private final Duration retention;
  private final Duration lease;
  private final Duration inFlightRetryAfter;
  private final int mismatchStatus;
  private final boolean replayMarker;
  private final StoragePolicy storagePolicy;
  private final FingerprintMode fingerprintMode;
  private final int maxRequestBody;
  private final int maxCapturedBody;
  private final Set<String> replayHeaders;
  private final Duration purgeInterval;
  private final String instance = UUID.randomUUID().toString();
  private final AtomicLong claims = new AtomicLong();
  private volatile boolean closed;
  private volatile RuntimeException lastPurgeFailure;

  private IdempotencyGuard(Builder b) {
    this.store = b.store;
    this.clock = b.clock;
    if (b.scheduler != null) {
      this.scheduler = b.scheduler;
      this.ownedExecutor = null;
    } else {
      ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "idem-guard-leases");
        t.setDaemon(true);
        return t;
      });
      executor.setRemoveOnCancelPolicy(true);
      this.ownedExecutor = executor;
      this.scheduler = Scheduler.of(executor);
    }
    this.keyHeader = b.keyHeader;
    this.scope = b.scope;
    this.keyRequiredMethods = Set.copyOf(b.keyRequiredMethods);
    this.routes = Map.copyOf(b.routes);
    this.retention = b.retention;
    this.lease = b.lease;
    this.inFlightRetryAfter = b.inFlightRetryAfter;
    this.mismatchStatus = b.mismatchStatus;
    this.replayMarker = b.replayMarker;
    this.storagePolicy = b.storagePolicy;
    this.fingerprintMode = b.fingerprintMode;
    this.maxRequestBody = b.maxRequestBody;
    this.maxCapturedBody = b.maxCapturedBody;
    Set<String> allowed = new java.util.HashSet<>(b.replayHeaders);
    allowed.removeAll(b.secretHeaders);
    this.replayHeaders = Set.copyOf(allowed);
    this.purgeInterval = b.purgeInterval;
    if (purgeInterval != null) {
      schedulePurge();
    }
  }

  /**
   * Starts a guard over {@code store}, with the defaults described on this class.
   *
   * @param store where operation records live; the guard does not close it
   * @return a builder
   */
  public static Builder builder(IdempotencyStore store) {
    return new Builder(store);
  }

  /**
   * The valid key in a key header's values, unquoted, as the guard reads it.
   *
   * @param headerValues every value of the key header
   * @return the key, or empty if the header is absent or malformed
   */
  public static Optional<String> validKey(List<String> headerValues) {
    return Optional.ofNullable(KeyParser.parse(headerValues).key());
  }

  /**
   * Decides what to do with a request: claims its operation, or answers it.
   *
   * @param request the request
   * @return the decision
   * @throws IOException if the body could not be read
   * @throws IdempotencyStoreException if the store failed; nothing was claimed, answer
   *     {@link #unavailableResponse()}
   * @throws IllegalStateException if the guard is closed
   */
  public Admission admit(GuardRequest request) throws IOException {
    Objects.requireNonNull(request, "request");
    if (closed) {
      throw new IllegalStateException("the idempotency guard is closed");
    }
    String route = request.method() + " " + request.path();
    RoutePolicy policy = policy(request.method(), route);
    KeyParser key = KeyParser.parse(request.keyHeaderValues());
    if (key.isAbsent()) {
      if (policy.keyRequired()) {
        return respond(Admission.Reason.KEY_MISSING, problem(400, "idempotency-key-missing",
            keyHeader + " is missing",
            "This operation is idempotent and requires an " + keyHeader + " header."));
      }
      return new Admission.Unguarded();
    }
    if (!key.isValid()) {
      return respond(Admission.Reason.KEY_MALFORMED, problem(400, "idempotency-key-malformed",
          keyHeader + " is malformed", "The " + keyHeader + " header has " + key.problem() + "."));
    }
    byte[] body = request.body().read(maxRequestBody + 1);
    if (body.length > maxRequestBody) {
      return respond(Admission.Reason.BODY_TOO_LARGE, problem(413, "body-too-large", "Content Too Large",
          "An idempotent request body may have at most " + maxRequestBody + " bytes; nothing was processed."));
    }
    Fingerprint fingerprint = fingerprint(request, body);
    RecordId id = scope.id(request.caller(), route, key.key());
    String owner = instance + "/" + claims.incrementAndGet();
    Instant now = clock.instant();
    ClaimAttempt attempt = store.claim(id, fingerprint, owner, now, now.plus(lease), now.plus(policy.retention()));
    if (attempt instanceof ClaimAttempt.Claimed c) {
      Claim claim = new Claim(id, c.generation(), owner, fingerprint, policy.retention());
      scheduleRenewal(claim);
      return new Admission.Proceed(claim, body);
    }
    if (attempt instanceof ClaimAttempt.Existing e) {
      StoredRecord r = e.record();
      // A mismatch wins over "in flight": a different payload under a used key is a client bug
      // that waiting will never fix, so "retry later" would be the wrong advice.
      if (!r.fingerprint().equals(fingerprint)) {
        return respond(Admission.Reason.KEY_REUSED, problem(mismatchStatus, "idempotency-key-reused",
            keyHeader + " reused with a different request",
            "This " + keyHeader + " was already used with a different request payload;"
                + " the key was reused, use a new key for a new operation."));
      }
      if (r.state() == RecordState.COMPLETED && r.response().isPresent()) {
        return respond(Admission.Reason.REPLAY, replay(r.response().get()));
      }
    }
    return respond(Admission.Reason.IN_FLIGHT, inFlight("idempotency-key-in-flight",
        "A request with this " + keyHeader + " is still being processed",
        "Retry after the first request has completed; the retry will get its result."));
  }

  /**
   * Ends a claim with the handler's response: stores it, or releases the claim, as the
   * {@link StoragePolicy} says. Stops renewing the lease.
   *
   * @param claim the claim from {@link Admission.Proceed}
   * @param response what the handler answered
   * @return what happened; on {@link CompletionResult#REFUSED} send {@link #refusedResponse()}
   * @throws IdempotencyStoreException if the store failed; the claim then stays in flight until
   *     its lease expires
   * @throws IllegalStateException if the claim was already completed or abandoned
   */
  public CompletionResult complete(Claim claim, CapturedResponse response) {
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(response, "response");
    if (!claim.finish()) {
      throw new IllegalStateException(claim + " was already completed or abandoned");
    }
    if (!storagePolicy.stores(response.status())) {
      return store.release(claim.id(), claim.generation(), claim.owner())
          ? CompletionResult.RELEASED : CompletionResult.REFUSED;
    }
    Map<String, List<String>> kept = new LinkedHashMap<>();
    response.headers().forEach((name, values) -> {
      if (replayHeaders.contains(name.toLowerCase(Locale.ROOT))) {
        kept.put(name, values);
      }
    });
    StoredResponse stored = response.overCap()
        ? new StoredResponse(response.status(), withoutContentType(kept), new byte[0], true)
        : new StoredResponse(response.status(), kept, response.body(), false);
    Instant now = clock.instant();
    boolean ok = store.complete(claim.id(), claim.generation(), claim.owner(), now, stored,
        now.plus(claim.retention()));
    if (!ok) {
      LOG.warn("Refused a stale completion of {}: its lease expired or another request took it over", claim);
    }
    return ok ? CompletionResult.STORED : CompletionResult.REFUSED;
  }

  /**
   * Releases a claim whose handler threw, so that a retry runs it again. Stops renewing the lease.
   * Does nothing if the claim was already completed or abandoned.
   *
   * @param claim the claim from {@link Admission.Proceed}
   * @throws IdempotencyStoreException if the store failed; the claim then stays in flight until
   *     its lease expires
   */
  public void abandon(Claim claim) {
    Objects.requireNonNull(claim, "claim");
    if (claim.finish()) {
      store.release(claim.id(), claim.generation(), claim.owner());
    }
  }

  /**
   * What to send instead of a response whose completion was {@link CompletionResult#REFUSED}: a
   * 409 with {@code Retry-After} (when configured), since another request may now hold the
   * operation and a retry will get its result.
   *
   * @return the response
   */
  public GuardResponse refusedResponse() {
    return inFlight("idempotency-claim-lost",
        "The claim on this " + keyHeader + " expired before its result was stored",
        "Another request may now be processing it; retry to get its result.");
  }

  /**
   * What to send when the store failed in {@link #admit}: 503 with {@code Retry-After: 1}.
   * Nothing was claimed, so a retry is safe.
   *
   * @return the response
   */
  public GuardResponse unavailableResponse() {
    Map<String, List<String>> h = new LinkedHashMap<>();
    h.put("Content-Type", List.of(Problems.MEDIA_TYPE));
    h.put("Retry-After", List.of("1"));
    return new GuardResponse(503, h, Problems.json(503, "store-unavailable",
        "The idempotency store is unavailable", "Nothing was processed; retry later."));
  }

  /**
   * Deletes records past retention now. The guard also does this on its own at the purge
   * interval.
   *
   * @return how many records were deleted
   * @throws IdempotencyStoreException if the store failed
   */
  public int purgeExpired() {
    return store.purgeExpired(clock.instant());
  }

  /**
   * The failure of the last background purge, cleared by the next one that succeeds. A failed
   * purge does not make the guard unsafe (expired records are treated as absent anyway), but the
   * store grows until it succeeds.
   *
   * @return the failure, if the last purge failed
   */
  public Optional<RuntimeException> lastPurgeFailure() {
    return Optional.ofNullable(lastPurgeFailure);
  }

  /** @return the name of the key header */
  public String keyHeader() {
    return keyHeader;
  }

  /** @return the longest request body the guard reads, in bytes */
  public int maxRequestBody() {
    return maxRequestBody;
  }

  /** @return the longest response body an adapter captures for storage, in bytes */
  public int maxCapturedBody() {
    return maxCapturedBody;
  }

  /** @return the store */
  public IdempotencyStore store() {
    return store;
  }

  /**
   * Stops lease renewals and the purge job, and the guard's own scheduler thread if it made one.
   * Does not close the store. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    if (ownedExecutor != null) {
      ownedExecutor.shutdownNow();
    }
  }

  private RoutePolicy policy(String method, String route) {
    RoutePolicy p = routes.get(route);
    return p != null ? p : new RoutePolicy(keyRequiredMethods.contains(method), retention);
  }

  private Fingerprint fingerprint(GuardRequest request, byte[] body) {
    String contentType = fingerprintMode == FingerprintMode.CANONICAL_JSON ? request.contentType() : null;
    RequestSnapshot snapshot = RequestSnapshot.builder(request.method(), uri(request))
        .body(body, contentType)
        .build();
    return Fingerprinter.defaults().fingerprint(snapshot);
  }

  private static URI uri(GuardRequest r) {
    String path = r.path().isEmpty() ? "/" : r.path();
    try {
      return new URI("http://idem.invalid" + path + (r.rawQuery() == null ? "" : "?" + r.rawQuery()));
    } catch (URISyntaxException e) {
      try {
        // A path the adapter did not encode: let URI quote it, so it still has one fingerprint.
        return new URI("http", "idem.invalid", path, r.rawQuery(), null);
      } catch (URISyntaxException again) {
        throw new IllegalArgumentException("unusable request path", again);
      }
    }
  }

  private GuardResponse replay(StoredResponse stored) {
    Map<String, List<String>> h = new LinkedHashMap<>(stored.headers());
    if (stored.bodyOmitted()) {
      h.put(REPLAY_BODY_HEADER, List.of("omitted"));
    }
    if (replayMarker) {
      h.put(REPLAYED_HEADER, List.of("true"));
    }
    return new GuardResponse(stored.status(), h, stored.body());
  }

  private static Map<String, List<String>> withoutContentType(Map<String, List<String>> headers) {
    Map<String, List<String>> out = new LinkedHashMap<>(headers);
    out.keySet().removeIf(n -> n.equalsIgnoreCase("content-type"));
    return out;
  }

  private GuardResponse problem(int status, String type, String title, String detail) {
    return new GuardResponse(status, Map.of("Content-Type", List.of(Problems.MEDIA_TYPE)),
        Problems.json(status, type, title, detail));
  }

  private GuardResponse inFlight(String type, String title, String detail) {
    Map<String, List<String>> h = new LinkedHashMap<>();
    h.put("Content-Type", List.of(Problems.MEDIA_TYPE));
    if (inFlightRetryAfter != null) {
      h.put("Retry-After", List.of(seconds(inFlightRetryAfter)));
    }
    return new GuardResponse(409, h, Problems.json(409, type, title, detail));
  }

  private static Admission respond(Admission.Reason reason, GuardResponse response) {
    return new Admission.Respond(reason, response);
  }

  // Rounded up: a Retry-After of 0 for a wait of 300 ms would invite an immediate, useless retry.
  private static String seconds(Duration d) {
    return Long.toString(d.getSeconds() + (d.getNano() > 0 ? 1 : 0));
  }

  private void scheduleRenewal(Claim claim) {
    if (closed || claim.finished()) {
      return;
    }
    claim.renewal(scheduler.schedule(() -> renew(claim), lease.dividedBy(3)));
  }

  private void renew(Claim claim) {
    if (claim.finished()) {
      return;
    }
    try {
      Instant now = clock.instant();
      if (!store.renew(claim.id(), claim.generation(), claim.owner(), now, now.plus(lease))) {
        claim.lost(null);
        LOG.warn("Lost the lease of {} while its handler ran; its completion will be refused", claim);
        return;
      }
    } catch (RuntimeException e) {
      // The lease may still be live: keep trying, and let completion decide.
      claim.lost(e);
      LOG.warn("Could not renew the lease of {}", claim, e);
    } catch (Error e) {
      // Not rethrown into the scheduler, where it would end unseen and renewals would stop quietly:
      // the claim is marked lost (its completion is then refused if another instance took over), and
      // renewals go on.
      claim.lost(e);
      LOG.error("Renewing the lease of {} failed with {}", claim, e.toString(), e);
    }
    scheduleRenewal(claim);
  }

  private void schedulePurge() {
    if (closed) {
      return;
    }
    scheduler.schedule(() -> {
      try {
        int n = purgeExpired();
        lastPurgeFailure = null;
        LOG.debug("Purged {} idempotency records past retention", n);
      } catch (RuntimeException e) {
        lastPurgeFailure = e;
        LOG.error("The idempotency purge failed; records past retention stay until it succeeds", e);
      } catch (Error e) {
        // Rethrown, the purge job would stop for good, unseen: record it and keep the schedule.
        lastPurgeFailure = new IllegalStateException("the purge failed with " + e, e);
        LOG.error("The idempotency purge failed with {}; records past retention stay until it succeeds",
            e.toString(), e);
      }
      schedulePurge();
    }, purgeInterval);
  }

  /**
   * Settings for an {@link IdempotencyGuard}. Not thread-safe; build on one thread.
   */
  public static final class Builder {
    private final IdempotencyStore store;
    private Clock clock = Clock.systemUTC();
    private Scheduler scheduler;
    private String keyHeader = DEFAULT_KEY_HEADER;
    private KeyScope scope = KeyScope.CALLER_AND_ROUTE;
    private Set<String> keyRequiredMethods = Set.of("POST", "PATCH");
    private final Map<String, RoutePolicy> routes = new HashMap<>();
    private Duration retention = Duration.ofHours(24);
    private Duration lease = Duration.ofSeconds(30);
    private Duration inFlightRetryAfter = Duration.ofSeconds(1);
    private int mismatchStatus = 422;
    private boolean replayMarker = true;
    private StoragePolicy storagePolicy = StoragePolicy.STORE_BELOW_500;
    private FingerprintMode fingerprintMode = FingerprintMode.CANONICAL_JSON;
    private int maxRequestBody = 1 << 20;
    private int maxCapturedBody = 1 << 20;
    private Set<String> replayHeaders = Set.of("content-type", "content-language", "content-location", "location",
        "etag", "last-modified");
    private Set<String> secretHeaders = Set.of("authorization", "proxy-authorization", "cookie", "set-cookie");
    private Duration purgeInterval = Duration.ofMinutes(10);

    private Builder(IdempotencyStore store) {
      this.store = Objects.requireNonNull(store, "the guard's store is null; give one, such as"
          + " JdbcIdempotencyStore.sqlite(path) (one instance) or JdbcIdempotencyStore.postgres(dataSource) (a fleet)");
    }

    /**
     * The source of now for leases and retention. Default the system clock.
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Runs lease renewals and the purge job. Default: a daemon thread the guard owns and stops on
     * {@link IdempotencyGuard#close()}. Tests pass a manual scheduler to make time explicit.
     *
     * @param scheduler the scheduler; the caller keeps ownership
     * @return this builder
     */
    public Builder scheduler(Scheduler scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * The key header. Default {@value IdempotencyGuard#DEFAULT_KEY_HEADER}.
     *
     * @param name the header name, case-insensitive
     * @return this builder
     * @throws IllegalArgumentException if blank
     */
    public Builder keyHeader(String name) {
      Objects.requireNonNull(name, "the guard's keyHeader is null; give a header name, or leave it unset for the"
          + " default " + DEFAULT_KEY_HEADER);
      if (name.isBlank()) {
        throw new IllegalArgumentException("keyHeader must not be blank");
      }
      this.keyHeader = name;
      return this;
    }

    /**
     * What a key is unique within. Default {@link KeyScope#CALLER_AND_ROUTE}.
     *
     * @param scope the scope
     * @return this builder
     */
    public Builder scope(KeyScope scope) {
      this.scope = Objects.requireNonNull(scope, "scope");
      return this;
    }

    /**
     * The methods that get 400 without a key, on routes without their own policy. Default POST
     * and PATCH.
     *
     * @param methods method names, case-insensitive; may be empty
     * @return this builder
     */
    public Builder keyRequiredMethods(Set<String> methods) {
      Objects.requireNonNull(methods, "methods");
      this.keyRequiredMethods = methods.stream().map(m -> m.toUpperCase(Locale.ROOT)).collect(Collectors.toSet());
      return this;
    }

    /**
     * A policy for one route, such as a longer retention for {@code POST /payments}.
     *
     * @param method the HTTP method
     * @param path the raw path, exactly as requests spell it (no templates)
     * @param policy the route's settings
     * @return this builder
     */
    public Builder route(String method, String path, RoutePolicy policy) {
      Objects.requireNonNull(method, "method");
      Objects.requireNonNull(path, "path");
      routes.put(method.toUpperCase(Locale.ROOT) + " " + path, Objects.requireNonNull(policy, "policy"));
      return this;
    }

    /**
     * How long a completed result is kept, counted from completion. Default 24 hours. After it
     * the key is new again: a repeat runs the handler again.
     *
     * @param retention positive
     * @return this builder
     * @throws IllegalArgumentException if not positive
     */
    public Builder retention(Duration retention) {
      this.retention = positive(retention, "retention");
      return this;
    }

    /**
     * The lease of a claim, renewed every third of it while the handler runs. Default 30 s.
     *
     * @param lease at least 3 ms
     * @return this builder
     * @throws IllegalArgumentException if shorter than 3 ms
     */
    public Builder lease(Duration lease) {
      positive(lease, "lease");
      if (lease.toMillis() < 3) {
        throw new IllegalArgumentException("lease must be at least 3 ms: " + lease);
      }
      this.lease = lease;
      return this;
    }

    /**
     * The {@code Retry-After} on a 409 for a key in flight, rounded up to whole seconds. Default
     * 1 s; null sends no {@code Retry-After}, as some servers do.
     *
     * @param retryAfter zero or positive, or null for none
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder inFlightRetryAfter(Duration retryAfter) {
      if (retryAfter != null && retryAfter.isNegative()) {
        throw new IllegalArgumentException("retryAfter must not be negative: " + retryAfter);
      }
      this.inFlightRetryAfter = retryAfter;
      return this;
    }

    /**
     * The status for a key reused with another payload. Default 422 (the IETF draft); some
     * servers answer 417 or 409.
     *
     * @param status 400..499
     * @return this builder
     * @throws IllegalArgumentException if not a 4xx
     */
    public Builder mismatchStatus(int status) {
      if (status < 400 || status > 499) {
        throw new IllegalArgumentException("the mismatch status is a 4xx, not " + status);
      }
      this.mismatchStatus = status;
      return this;
    }

    /**
     * Whether replays carry {@value IdempotencyGuard#REPLAYED_HEADER}{@code : true}. Default true.
     *
     * @param on false to send replays unmarked
     * @return this builder
     */
    public Builder replayMarker(boolean on) {
      this.replayMarker = on;
      return this;
    }

    /**
     * Which results are stored. Default {@link StoragePolicy#STORE_BELOW_500}.
     *
     * @param policy the policy
     * @return this builder
     */
    public Builder storagePolicy(StoragePolicy policy) {
      this.storagePolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * How bodies are fingerprinted. Default {@link FingerprintMode#CANONICAL_JSON}.
     *
     * @param mode the mode
     * @return this builder
     */
    public Builder fingerprintMode(FingerprintMode mode) {
      this.fingerprintMode = Objects.requireNonNull(mode, "mode");
      return this;
    }

    /**
     * The longest request body of a keyed request, in bytes; longer ones get 413 and claim
     * nothing. Default 1 MiB. The guard holds the body in memory to fingerprint it.
     *
     * @param bytes 0 or more, below {@link Integer#MAX_VALUE}
     * @return this builder
     * @throws IllegalArgumentException if out of range
     */
    public Builder maxRequestBody(int bytes) {
      if (bytes < 0 || bytes == Integer.MAX_VALUE) {
        throw new IllegalArgumentException("maxRequestBody out of range: " + bytes);
      }
      this.maxRequestBody = bytes;
      return this;
    }

    /**
     * The longest response body stored for replay, in bytes. Default 1 MiB. A longer one is
     * sent but not stored; see the class documentation for what its replay sends.
     *
     * @param bytes 0 or more
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder maxCapturedBody(int bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("maxCapturedBody must not be negative: " + bytes);
      }
      this.maxCapturedBody = bytes;
      return this;
    }

    /**
     * The response headers stored and replayed. Default {@code Content-Type}, {@code Content-Language},
     * {@code Content-Location}, {@code Location}, {@code ETag}, {@code Last-Modified}. Secret
     * headers are never stored, even if listed.
     *
     * @param names header names, case-insensitive
     * @return this builder
     */
    public Builder replayHeaders(Set<String> names) {
      this.replayHeaders = lower(names);
      return this;
    }

    /**
     * Headers never stored, whatever the allowlist says. Default {@code Authorization},
     * {@code Proxy-Authorization}, {@code Cookie} and {@code Set-Cookie}; the names given here are
     * added to those.
     *
     * @param names more header names, case-insensitive
     * @return this builder
     */
    public Builder secretHeaders(Set<String> names) {
      Set<String> all = new java.util.HashSet<>(Set.of("authorization", "proxy-authorization", "cookie", "set-cookie"));
      all.addAll(lower(names));
      this.secretHeaders = Set.copyOf(all);
      return this;
    }

    /**
     * How often the guard purges records past retention. Default 10 minutes; null for never
     * (call {@link IdempotencyGuard#purgeExpired()} yourself).
     *
     * @param interval positive, or null
     * @return this builder
     * @throws IllegalArgumentException if not positive
     */
    public Builder purgeInterval(Duration interval) {
      this.purgeInterval = interval == null ? null : positive(interval, "purgeInterval");
      return this;
    }

    /**
     * Builds the guard, and starts its purge job.
     *
     * @return the guard
     */
    public IdempotencyGuard build() {
      return new IdempotencyGuard(this);
    }

    private static Set<String> lower(Set<String> names) {
      Objects.requireNonNull(names, "names");
      List<String> out = new ArrayList<>();
      names.forEach(n -> out.add(Objects.requireNonNull(n, "name").toLowerCase(Locale.ROOT)));
      return Set.copyOf(out);
    }

    private static Duration positive(Duration d, String name) {
      Objects.requireNonNull(d, () -> "the guard's " + name + " is null; give a positive Duration, or leave it unset"
          + " for the default");
      if (d.isZero() || d.isNegative()) {
        throw new IllegalArgumentException(name + " must be positive: " + d);
      }
      return d;
    }
  }
}
