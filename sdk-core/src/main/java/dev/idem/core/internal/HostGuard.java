package dev.idem.core.internal;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.Classification;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.event.IdemListener;
import dev.idem.core.host.RetryBudget;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Guards each target host with a resilience4j circuit breaker and a {@link RetryBudget}: it
 * admits or refuses an attempt before it is sent, and learns from how it ended. Thread-safe.
 *
 * <p>Bounded: a host's breaker (about 3.5 KB) is dropped once it holds nothing worth keeping,
 * that is closed with no failure in its window (a host seen again gets a new, empty one), and was
 * not used for {@link #IDLE_AFTER}. While more than {@value #MAX_HOSTS} hosts hold one, such empty
 * breakers are dropped sooner, the longest unused first, once unused for {@link #MIN_IDLE}; then
 * the closed ones holding failures that were not used for {@link #IDLE_AFTER}; then the open ones
 * whose open period ended {@link #IDLE_AFTER} ago and that were not used for as long (a host that
 * went down and was not called since: a dead callback URL), down to three quarters of the cap. An
 * open breaker is never dropped while its open period lasts, whatever the number of hosts: an open
 * host stays refused for its whole open period. A half-open one is never dropped either (its probes
 * are out). Open ones past their period are dropped only past the cap, as the closed ones holding
 * failures are, not always as the empty ones are: such a breaker still knows the host was down,
 * and a call to it only lets the half-open probes through, where a new breaker would let through
 * the minimum number of calls before it could open again. A dead callback URL is mostly called
 * again by a deliverer's retry, at intervals past {@link #IDLE_AFTER}: while memory allows, each
 * round stays a probe or two. Past the cap the memory wins, since any number of hosts can go down
 * and stay so. The listener is told of such a drop as of a reset, OPEN to CLOSED (see
 * {@link IdemEvent.BreakerStateChanged}): the host's next call gets a new, closed breaker, which may
 * never change state again, so nothing else would correct the OPEN it was last told.
 *
 * <p>The dropping is done, with no thread of its own, by a call to a host that has no breaker yet
 * (the only call that grows the map), at most once a minute, or at once when the map passes its
 * threshold. That threshold is the cap after a sweep that got down to three quarters of it; after
 * one that could not (the rest open within or not long past their period, half-open, in use, or
 * used lately), it is a quarter above the larger of the cap
 * and what was left, so that each sweep's scan of the map is paid for by the new hosts since the
 * last one (a constant share each) and a steady stream of new hosts at the cap does not scan the
 * map for every other one. The map may thus exceed {@value #MAX_HOSTS} by a quarter (12,500
 * breakers), or, when more than the cap cannot be dropped, hold those plus a quarter again (plus
 * the hosts other threads bring while a sweep runs). Past the cap, what cannot be dropped is a
 * breaker in use, half-open, used within {@link #IDLE_AFTER} (within {@link #MIN_IDLE} for an empty
 * one), or open and not yet {@link #IDLE_AFTER} past its open period: the map is bounded by the
 * hosts called lately, and hosts that go down and are then never called again do not add up.
 */
public final class HostGuard {
  private static final Logger LOG = LoggerFactory.getLogger(HostGuard.class);
  /** Why an attempt may not be sent now. */
  public enum Refusal { NONE, BREAKER_OPEN, BUDGET_EMPTY }

  /** What one attempt says about the host, for its breaker (see {@link CircuitBreakerSettings}). */
  public enum Health {
    /** The host answered: a success for the breaker. */
    UP,
    /** Unreachable or a gateway error: a failure for the breaker. */
    DOWN,
    /** Says nothing about the host (a lost response, a key in flight): the permission is given back. */
    UNKNOWN
  }

  /**
   * The longest slow-call threshold resilience4j can hold (it keeps the threshold in nanoseconds):
   * no recorded duration exceeds it, so no call is ever slow.
   */
  static final Duration NEVER_SLOW = Duration.ofNanos(Long.MAX_VALUE);
  /**
   * How long a breaker holding nothing worth keeping stays unused before it is dropped; past the
   * cap, also how long a closed one holding failures stays unused, and an open one stays unused and
   * past its open period, before it may be dropped.
   */
  static final Duration IDLE_AFTER = Duration.ofMinutes(10);
  /** Past {@link #MAX_HOSTS}, how long an empty breaker stays unused before it may be dropped. */
  static final Duration MIN_IDLE = Duration.ofMinutes(1);
  /** Hosts holding a breaker beyond which empty ones are dropped sooner. */
  static final int MAX_HOSTS = 10_000;
  private static final long SWEEP_EVERY_MILLIS = 60_000;
  /**
   * A breaker's {@link Breaker#lastUsed} is rewritten only when this much older than now: the
   * calls to a busy host do not each write the shared field. Far below {@link #MIN_IDLE}, so a
   * breaker found idle was not used since well before the stamp it shows.
   */
  private static final long TOUCH_GRAIN_MILLIS = 1_000;

  private final CircuitBreakerSettings settings;
  private final RetryBudget budget;
  private final Clock clock;
  private final IdemListener listener;
  private final ConcurrentHashMap<String, Breaker> breakers = new ConcurrentHashMap<>();
  private final Function<String, Breaker> newBreaker = this::newBreaker;
  private final int maxHosts;
  private final AtomicBoolean sweeping = new AtomicBoolean();
  /** When a call that brings a new host next looks for breakers to drop, in the clock's millis. */
  private volatile long nextSweepAt;
  /** Past this many breakers, that call looks at once (raised when too few could be dropped). */
  private volatile int sweepAbove;

  /**
   * A host's resilience4j breaker, and the state this guard last saw it in. Its changes of state
   * are seen by looking after each call that can change it ({@link #observe}), not through
   * resilience4j's event publisher: a breaker with any consumer builds and publishes an event
   * (with a ZonedDateTime) for every success and error it records, which was most of what the
   * guard cost a call.
   */
  private static final class Breaker {
    final CircuitBreaker breaker;
    final AtomicReference<CircuitBreaker.State> seen = new AtomicReference<>(CircuitBreaker.State.CLOSED);
    /** When the open breaker lets a probe through; null unless it is open. */
    volatile Instant openUntil;
    /** The window's size: the calls it holds once full. */
    private final int windowSize;
    /** When this breaker was last taken from the map for a call, in the clock's millis. */
    volatile long lastUsed;
    /**
     * Set by the sweep before it drops the breaker, and cleared again if it finds it in use or used
     * since: a caller that finds it set takes the breaker from the map again (see {@link #breaker}).
     */
    volatile boolean retired;
    /**
     * Callers between taking this breaker ({@link #breaker}) and their last use of it
     * ({@link #done}): the sweep never drops a breaker while one is inside resilience4j with it.
     */
    final AtomicInteger inUse = new AtomicInteger();
    /** A success that took longer than this is a slow call for resilience4j. */
    private final long slowNanos;

    Breaker(CircuitBreaker breaker, long now) {
      this.breaker = breaker;
      this.lastUsed = now;
      CircuitBreakerConfig config = breaker.getCircuitBreakerConfig();
      // Only a count-based window is full at a number of calls; any other never lets a success go.
      this.windowSize = config.getSlidingWindowType() == CircuitBreakerConfig.SlidingWindowType.COUNT_BASED
          ? config.getSlidingWindowSize() : Integer.MAX_VALUE;
      this.slowNanos = config.getSlowCallDurationThreshold().toNanos();
    }

    /**
     * Records a success, unless recording it would leave the breaker as it is: closed, with a full
     * count-based window of fast successes only (a healthy host's usual state). The new success
     * would then push out the oldest, also a fast success: the window's counts, its failure and
     * slow-call rates and the state stay the same. Skipping it spares every call to a healthy host
     * the window's compare-and-set on one shared reference and the copy of its counts that
     * resilience4j makes per record, the same way {@link TokenBucketRetryBudget#onSuccess} skips
     * the refund to a full bucket. Reading the counts takes no lock and writes nothing.
     *
     * <p>A failure recorded by another thread at the same moment stays in the window for as many
     * recorded calls as it would have, counted from when it was recorded; only a success that had
     * not yet reached the window when the failure did may then be left out, so the window can
     * hold one failure among its calls for a little longer than resilience4j alone would keep it,
     * never for less.
     */
    void onSuccess(long nanos) {
      if (nanos <= slowNanos && breaker.getState() == CircuitBreaker.State.CLOSED) {
        CircuitBreaker.Metrics m = breaker.getMetrics();
        if (m.getNumberOfBufferedCalls() >= windowSize && m.getNumberOfFailedCalls() == 0
            && m.getNumberOfSlowCalls() == 0) {
          // A closed breaker holds no permission to give back (its releasePermission does nothing).
          return;
        }
      }
      breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
    }

    /** Closed, as last told, with no failure in its window: a new breaker would do the same. */
    boolean empty() {
      return seen.get() == CircuitBreaker.State.CLOSED && breaker.getState() == CircuitBreaker.State.CLOSED
          && breaker.getMetrics().getNumberOfFailedCalls() == 0;
    }

    /** The failures its window holds now. */
    int failures() {
      return breaker.getMetrics().getNumberOfFailedCalls();
    }

    /** Closed, as last told: it admits every call, whatever failures its window holds. */
    boolean closed() {
      return seen.get() == CircuitBreaker.State.CLOSED && breaker.getState() == CircuitBreaker.State.CLOSED;
    }

    /**
     * Still open, as last told, with the open period {@code until} that the sweep read: not
     * half-opened since, nor opened again (which sets a new {@link #openUntil}).
     */
    boolean openUntil(Instant until) {
      return seen.get() == CircuitBreaker.State.OPEN && breaker.getState() == CircuitBreaker.State.OPEN
          && openUntil == until;
    }
  }

  public HostGuard(CircuitBreakerSettings settings, RetryBudget budget, Clock clock, IdemListener listener) {
    this(settings, budget, clock, listener, MAX_HOSTS);
  }

  /** As the public constructor, with the number of hosts past which breakers are dropped sooner. */
  HostGuard(CircuitBreakerSettings settings, RetryBudget budget, Clock clock, IdemListener listener, int maxHosts) {
    this.settings = settings;
    this.budget = budget;
    this.clock = clock;
    this.listener = listener;
    this.maxHosts = Checks.atLeastOne(maxHosts, "maxHosts");
    this.sweepAbove = maxHosts;
    this.nextSweepAt = clock.millis() + SWEEP_EVERY_MILLIS;
  }

  /**
   * The host key of a request URI: lower-case host and port (the scheme's default if none is
   * written), never user info, also for a host that {@link URI} reads no host from. The calls of a thread mostly
   * bring the same URI instance (the adapters reuse the URI of the thread's previous call): that
   * one's key is given as it was made, so the breaker's and the budget's maps hash a String whose
   * hash is already computed, instead of a new one built for every call.
   */
  public static String hostOf(URI uri) {
    LastHost last = LAST_HOST.get();
    if (last.uri != uri) {
      last.host = hostKey(uri);
      last.uri = uri;
    }
    return last.host;
  }

  /** The last URI of a thread and its host key: one entry, so bounded. */
  private static final class LastHost {
    URI uri;
    String host;
  }

  private static final ThreadLocal<LastHost> LAST_HOST = ThreadLocal.withInitial(LastHost::new);

  /**
   * Host and port, read through {@link UriAuthority}: a host with an underscore gives no
   * {@code getHost()}, and its authority holds any user info, which would become the label of
   * every event, metric tag and breaker reason for the host.
   */
  private static String hostKey(URI uri) {
    int port = UriAuthority.port(uri);
    if (port < 0) {
      port = "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }
    String host = String.valueOf(UriAuthority.host(uri));
    return host.toLowerCase(Locale.ROOT) + ":" + port;
  }

  /**
   * Asks whether an attempt to {@code host} may be sent now. A retry also needs the budget; if
   * the breaker admitted it but the budget refuses, the breaker's permission is given back. If
   * anything after the breaker's permission is taken throws (the listener told of the breaker's
   * change of state, the app's budget), the permission is given back and the exception passed on.
   */
  public Refusal admit(String host, boolean isRetry) {
    Breaker b = breaker(host);
    try {
      return admit(host, isRetry, b);
    } finally {
      done(b);
    }
  }

  private Refusal admit(String host, boolean isRetry, Breaker b) {
    // An open breaker whose period is over half-opens here.
    boolean permitted = b == null || b.breaker.tryAcquirePermission();
    boolean afforded;
    try {
      if (b != null) {
        observe(host, b);
      }
      if (!permitted) {
        return Refusal.BREAKER_OPEN;
      }
      afforded = !isRetry || budget.tryAcquireRetry(host);
    } catch (Throwable e) {
      // The listener's Error or the app's budget threw, before AttemptLoop holds the permission
      // (it leaves the operation PENDING): the permission the breaker gave, a half-open probe's
      // maybe, is given back here, or no one does and the breaker refuses the host for good.
      if (b != null && permitted) {
        b.breaker.releasePermission();
      }
      throw e;
    }
    if (!afforded) {
      if (b != null) {
        b.breaker.releasePermission();
      }
      return Refusal.BUDGET_EMPTY;
    }
    return Refusal.NONE;
  }

  /**
   * What a response says about its host: 502, 503 and 504 that it is down; the in-flight answer
   * and other 5xx nothing; any other answer that it is up.
   *
   * @param status the HTTP status
   * @param inFlight whether the response is the protocol's "key still in flight" answer
   * @return the health signal
   */
  public static Health healthOf(int status, boolean inFlight) {
    if (inFlight) {
      return Health.UNKNOWN;
    }
    return switch (status) {
      case 502, 503, 504 -> Health.DOWN;
      default -> status >= 500 ? Health.UNKNOWN : Health.UP;
    };
  }

  /**
   * What a failure to get a response says about its host: down if nothing was sent (SAFE),
   * otherwise nothing (the response of a keyed attempt may just be lost).
   *
   * @param classification the failure's class
   * @return the health signal
   */
  public static Health healthOf(Classification classification) {
    return classification == Classification.SAFE ? Health.DOWN : Health.UNKNOWN;
  }

  /**
   * Reports how an admitted attempt to {@code host} ended.
   *
   * @param classification the attempt's class; a SUCCESS refunds the retry budget
   * @param health what the attempt says about the host, for its breaker
   * @param took how long the attempt took
   * @param wasRetry whether {@link #admit} charged the attempt to the retry budget
   */
  public void record(String host, Classification classification, Health health, Duration took, boolean wasRetry) {
    // The breaker first, then the app's budget: an Error from the budget passes on (to AttemptLoop's
    // safety net, the JVM's own to the caller), and the caller no longer holds the permission, so a
    // half-open probe's not given back before it would keep the breaker refusing the host for good.
    Breaker b = breaker(host);
    if (b != null) {
      try {
        long nanos = Math.max(0, took.toNanos());
        switch (health) {
          case UP -> b.onSuccess(nanos);
          case DOWN -> b.breaker.onError(nanos, TimeUnit.NANOSECONDS, new IOException("host down: " + classification));
          default -> b.breaker.releasePermission();
        }
        observe(host, b);
      } finally {
        // Before the budget: only the breaker's own calls keep it from being dropped.
        done(b);
      }
    }
    if (classification == Classification.SUCCESS) {
      try {
        if (wasRetry) {
          budget.onRetrySuccess(host);
        } else {
          budget.onSuccess(host);
        }
      } catch (RuntimeException e) {
        // As for a listener: telling the budget of an outcome never changes it.
        LOG.warn("the retry budget threw {} when told of a success to {}; ignored", e.getClass().getName(), host);
      }
    }
  }

  /** Gives back a permission that was not used, for an attempt that was never sent. */
  public void release(String host) {
    Breaker b = breaker(host);
    if (b != null) {
      try {
        b.breaker.releasePermission();
      } finally {
        done(b);
      }
    }
  }

  /** How long until an open breaker lets a probe through: the configured open period. */
  public Duration openFor() {
    return settings.openFor();
  }

  /**
   * How long until the open breaker of {@code host} lets a probe through: zero if it is not open
   * (half-open, with every probe taken), else the rest of its open period plus a millisecond,
   * since resilience4j half-opens strictly after the period.
   *
   * @param host the host key
   * @return a wait, never negative
   */
  public Duration untilProbe(String host) {
    Breaker b = breakers.get(host);
    Instant until = b == null ? null : b.openUntil;
    if (until == null) {
      return Duration.ZERO;
    }
    Duration left = Duration.between(clock.instant(), until);
    return left.isNegative() ? Duration.ZERO : left.plusMillis(1);
  }

  /** Hosts holding a breaker now; for tests. */
  int hostsHeld() {
    return breakers.size();
  }

  /**
   * The breaker of {@code host}, stamped as used and counted in use ({@link Breaker#inUse}): the
   * caller must hand it to {@link #done} after its last use of it, on every path. A caller that
   * took a breaker just before the sweep dropped it would record into one no longer in the map,
   * and a failure recorded there (an opening one too) would be lost. The count and
   * {@link Breaker#retired} are the two sides of a handshake: the caller counts itself in and then
   * reads the flag; the sweep sets the flag and then reads the count. Either the sweep sees the
   * caller (it is in use, or was until it was done with it, which left its mark in the breaker's
   * state or window, that the sweep reads after the count) and keeps the breaker, or the caller
   * sees the flag, counts itself out and takes the breaker from the map again, getting a new one
   * if it was dropped. This holds however long a caller stalls anywhere in between, and however
   * the clock moves.
   */
  private Breaker breaker(String host) {
    if (!settings.enabled()) {
      return null;
    }
    while (true) {
      Breaker b = breakers.get(host);
      if (b == null) {
        // Only a host without a breaker can grow the map: the look for ones to drop is made here.
        sweepIfDue();
        b = breakers.computeIfAbsent(host, newBreaker);
      }
      b.inUse.getAndIncrement();
      long now = clock.millis();
      if (now - b.lastUsed >= TOUCH_GRAIN_MILLIS) {
        b.lastUsed = now;
      }
      if (!b.retired) {
        return b;
      }
      b.inUse.getAndDecrement();
      // The sweep is deciding about this breaker: it drops it, or clears the flag, right away.
      Thread.onSpinWait();
    }
  }

  /** The caller's last use of a breaker from {@link #breaker} is over; null (guard off) is fine. */
  private static void done(Breaker b) {
    if (b != null) {
      b.inUse.getAndDecrement();
    }
  }

  private void sweepIfDue() {
    long now = clock.millis();
    if (now - nextSweepAt < 0 && breakers.size() <= sweepAbove) {
      return;
    }
    if (!sweeping.compareAndSet(false, true)) {
      return;   // another caller is sweeping
    }
    try {
      sweep(now);
    } finally {
      sweeping.set(false);
    }
  }

  /**
   * A breaker and its stamp, read once: the sort needs keys that do not change under it. Its rank
   * is the order in which the cap drops: 0 empty, 1 closed holding failures, 2 open past its period
   * ({@code openUntil} then is the period the sweep read, else null).
   */
  private record Candidate(String host, Breaker breaker, long lastUsed, int failures, int rank, Instant openUntil) {}

  private void sweep(long now) {
    long idleAfter = IDLE_AFTER.toMillis();
    long minIdle = MIN_IDLE.toMillis();
    List<Candidate> spare = new ArrayList<>();
    breakers.forEach((host, b) -> {
      long used = b.lastUsed;
      if (b.empty()) {
        if (now - used >= idleAfter) {
          drop(host, b, used, 0);
        } else if (now - used >= minIdle) {
          spare.add(new Candidate(host, b, used, 0, 0, null));
        }
      } else if (now - used >= idleAfter) {
        if (b.closed()) {
          spare.add(new Candidate(host, b, used, b.failures(), 1, null));
        } else {
          // Null while the breaker is not open, or for the moment between its opening being seen
          // and its period being written: kept then.
          Instant until = b.openUntil;
          if (until != null && now - until.toEpochMilli() >= idleAfter) {
            spare.add(new Candidate(host, b, used, 0, 2, until));
          }
        }
      }
    });
    if (breakers.size() > maxHosts) {
      // Empty ones first, then closed ones holding failures (a new breaker admits the same; only
      // their stale failures are forgotten), then open ones long past their period (a new breaker
      // admits more than their probes; only that the host was down long ago is forgotten), the
      // longest unused first. Never a half-open one, nor an open one within its period.
      spare.sort(Comparator.comparingInt(Candidate::rank).thenComparingLong(Candidate::lastUsed));
      int target = CapSweep.target(maxHosts);
      for (Candidate c : spare) {
        if (breakers.size() <= target) {
          break;
        }
        if (c.openUntil() == null) {
          drop(c.host(), c.breaker(), c.lastUsed(), c.failures());
        } else {
          dropOpen(c.host(), c.breaker(), c.lastUsed(), c.openUntil());
        }
      }
    }
    // Always head-room: a sweep that dropped only the one or two breakers that just passed
    // MIN_IDLE would otherwise leave the map at the cap, and the next new host would scan it all
    // again. See CapSweep for the bound on the map and on the scans per new host.
    sweepAbove = CapSweep.nextThreshold(breakers.size(), maxHosts);
    nextSweepAt = now + SWEEP_EVERY_MILLIS;
  }

  /**
   * Drops the breaker of {@code host} only if, with {@link Breaker#retired} set, no caller holds
   * it ({@link Breaker#inUse} is zero), it was not used since the sweep read its stamp
   * {@code used}, it is still closed, and its window holds the {@code failures} the sweep saw
   * (none for an empty one). All of that is read after the flag is set and the count found zero,
   * so it includes whatever every caller that missed the flag did with the breaker: a failure
   * being recorded (an opening one mid-transition too) keeps the breaker, because its caller is
   * still counted in, or, once it is done, because the opened state or the changed number of
   * failures is seen. (A failure that took the place of an older one in a full window of a closed
   * breaker leaves the number as it was; it is forgotten with the window, as the failures of any
   * closed breaker dropped past the cap are, and the host is admitted either way.) Every caller
   * that comes later sees the flag (see {@link #breaker}); none records into a dropped breaker.
   */
  private void drop(String host, Breaker b, long used, int failures) {
    b.retired = true;
    if (b.inUse.get() == 0 && b.lastUsed == used && b.closed() && b.failures() == failures) {
      breakers.remove(host, b);
    } else {
      b.retired = false;
    }
  }

  /**
   * As {@link #drop}, for an open breaker whose period {@code until} the sweep found long over:
   * dropped only if, with {@link Breaker#retired} set, no caller holds it, it was not used since
   * the sweep read its stamp {@code used}, and it is still open with that same period (a caller
   * that half-opened it, or whose probe failed and opened it again, changed one or the other).
   * Last, resilience4j itself is asked whether its open period is over, since its own deadline is
   * the one that counts: two threads that half-open and re-open a breaker at the same moment can
   * leave {@link Breaker#openUntil} at the older period ({@link #observe}). Refused, it stays open
   * and unchanged (resilience4j only counts the refused call), and is kept; permitted, it has just
   * half-opened, and is dropped with that permission: no caller can reach it any more. The
   * listener, last told OPEN, is then told OPEN to CLOSED: the host is admitted as a new host is.
   */
  private void dropOpen(String host, Breaker b, long used, Instant until) {
    b.retired = true;
    if (b.inUse.get() == 0 && b.lastUsed == used && b.openUntil(until) && b.breaker.tryAcquirePermission()) {
      breakers.remove(host, b);
      // The listener was last told OPEN, and the host's new breaker starts closed and may never
      // change state: without this, whatever tracks the hosts' states (the Spring starter's health)
      // would show the host open for good. Told as resilience4j's reset, OPEN to CLOSED with no
      // HALF_OPEN between, which is what forgetting it amounts to (see BreakerStateChanged). Told
      // after the removal, not while the breaker is retired: callers to the host would spin
      // through the listener's call, forever if it calls the host itself. A new breaker's first
      // change, made and told by another thread in between, can then reach the listener before
      // this one; its next change corrects that (as a merged change in observe is corrected).
      tell(new IdemEvent.BreakerStateChanged(host, CircuitBreaker.State.OPEN.name(),
          CircuitBreaker.State.CLOSED.name()));
    } else {
      b.retired = false;
    }
  }

  private Breaker newBreaker(String host) {
    CircuitBreakerConfig config = CircuitBreakerConfig.custom()
        .failureRateThreshold(settings.failureRatePercent())
        .slidingWindowSize(settings.slidingWindowSize())
        // Every call to a host records its outcome in that host's window: the default window takes
        // a lock shared by all of them, the lock-free one (same counts) does not.
        .slidingWindowSynchronizationStrategy(CircuitBreakerConfig.SlidingWindowSynchronizationStrategy.LOCK_FREE)
        .minimumNumberOfCalls(settings.minimumCalls())
        // Slow-call counting off: the breaker judges whether the host is reachable and serving, and
        // a 2xx is a success however long it took. resilience4j's defaults (a call over 60 s is
        // slow, a window 100% slow opens) would open a healthy slow host's breaker on successes
        // alone. No call is longer than Long.MAX_VALUE ns (resilience4j marks slow only above the
        // threshold), and a rate of 100% is never reached by a window with no slow call.
        .slowCallDurationThreshold(NEVER_SLOW)
        .slowCallRateThreshold(100)
        .waitDurationInOpenState(settings.openFor())
        .permittedNumberOfCallsInHalfOpenState(settings.halfOpenProbes())
        .clock(clock)
        .build();
    return new Breaker(CircuitBreaker.of("idem-" + host, config), clock.millis());
  }

  /**
   * Tells the listener of a change of the breaker's state since this guard last saw it, once: of
   * the threads that see the same change, the one that moves {@link Breaker#seen} tells it. The
   * guard's breakers change state only within its own calls to them (no automatic half-opening),
   * so each change is seen by the thread that made it, right after. Only two changes that two
   * threads make at the same moment can be told as one (CLOSED to HALF_OPEN for CLOSED to OPEN to
   * HALF_OPEN); through resilience4j's publisher such changes could reach the listener out of order.
   */
  private void observe(String host, Breaker b) {
    CircuitBreaker.State now = b.breaker.getState();
    CircuitBreaker.State was = b.seen.get();
    if (now == was || !b.seen.compareAndSet(was, now)) {
      return;
    }
    b.openUntil = now == CircuitBreaker.State.OPEN ? clock.instant().plus(settings.openFor()) : null;
    tell(new IdemEvent.BreakerStateChanged(host, was.name(), now.name()));
  }

  private void tell(IdemEvent.BreakerStateChanged change) {
    try {
      listener.onEvent(change);
    } catch (RuntimeException e) {
      // As resilience4j's publisher did: a listener never changes what the breaker does.
      LOG.warn("an IdemListener threw on a breaker's change of state; ignored", e);
    }
  }
}
