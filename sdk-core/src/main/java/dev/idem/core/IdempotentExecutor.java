package dev.idem.core;

import dev.idem.core.internal.AsyncDriver;
import dev.idem.core.internal.AttemptLoop;
import dev.idem.core.internal.EngineSettings;
import dev.idem.core.internal.SingleFlight;
import dev.idem.core.internal.Step;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Executes logical operations with one key across every attempt: journals the operation before
 * the first byte is sent, retries with bounded, jittered backoff, keeps safe, ambiguous, transient
 * and permanent failures apart, and reports success only when a response says so.
 *
 * <pre>{@code
 * IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).build();
 * Outcome out = idem.execute(Operation.builder("create-order", snapshot).build(), transport);
 * }</pre>
 *
 * <p>What each call ends in:
 * <ul>
 *   <li>{@link Outcome}: SUCCEEDED; the response is the server's (perhaps a replay).</li>
 *   <li>{@link OperationFailedException}: FAILED; nothing took effect as far as anyone can know.</li>
 *   <li>{@link OperationUncertainException}: UNCERTAIN; an attempt may have taken effect.</li>
 *   <li>{@link OperationPendingException}: still PENDING (interrupted, cancelled, or owned elsewhere).</li>
 *   <li>{@link IdempotencyKeyReusedException}: the key belongs to another request.</li>
 *   <li>{@link JournalException}: the journal failed; if it failed at begin, nothing was sent.</li>
 * </ul>
 *
 * <p>Within one executor, concurrent calls for the same {@link OperationId} are single-flight: the
 * second waits for the first one's outcome instead of sending. Thread-safe.
 */
public final class IdempotentExecutor {
  private final EngineSettings settings;
  private final RetryPolicy policy;
  private final Fingerprinter fingerprinter;
  private final Sleeper sleeper;
  private final Scheduler scheduler;
  private final Set<String> secretHeaders;
  private final SingleFlight singleFlight = new SingleFlight();

  private IdempotentExecutor(Builder b) {
    this.settings = new EngineSettings(b.journal, b.classifier, b.clock, b.random, b.owner, b.leaseFor,
        b.replayHeader);
    this.policy = b.policy;
    this.fingerprinter = b.fingerprinter;
    this.sleeper = b.sleeper;
    this.scheduler = b.scheduler != null ? b.scheduler : DefaultScheduler.INSTANCE;
    this.secretHeaders = Set.copyOf(b.secretHeaders);
  }

  /** A builder with the defaults listed on each setter. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Executes an operation on the calling thread, waiting between attempts with the sleeper.
   *
   * @return the outcome of a SUCCEEDED operation
   * @throws IdempotencyException as listed in the class comment
   */
  public Outcome execute(Operation operation, Transport transport) throws IdempotencyException {
    Objects.requireNonNull(transport, "transport");
    OperationRecord record = begin(operation);
    if (record.state().isTerminal()) {
      return finish(AttemptLoop.settled(record));
    }
    SingleFlight.Ticket ticket = singleFlight.join(operation.id());
    if (!ticket.leader()) {
      return awaitLeader(operation.id(), ticket.result());
    }
    try {
      Outcome out = drive(new AttemptLoop(settings, record, policyFor(operation)), operation.request(),
          operation.key(), transport);
      ticket.result().complete(out);
      return out;
    } catch (IdempotencyException | RuntimeException | Error e) {
      ticket.result().completeExceptionally(e);
      throw e;
    } finally {
      singleFlight.leave(operation.id(), ticket);
    }
  }

  /**
   * Executes an operation without blocking: attempts run through {@code transport}, and waits are
   * scheduled on the scheduler, so no thread is held during backoff. Begin happens before this
   * method returns; if it fails, the future is already failed and nothing was sent.
   *
   * <p>Cancelling the returned future stops further attempts and leaves the operation PENDING.
   *
   * @return a future of the outcome, failing with the exceptions listed in the class comment
   */
  public CompletableFuture<Outcome> executeAsync(Operation operation, AsyncTransport transport) {
    Objects.requireNonNull(transport, "transport");
    OperationRecord record;
    try {
      record = begin(operation);
    } catch (IdempotencyException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (record.state().isTerminal()) {
      return completed(AttemptLoop.settled(record));
    }
    SingleFlight.Ticket ticket = singleFlight.join(operation.id());
    if (!ticket.leader()) {
      return ticket.result().copy();
    }
    CompletableFuture<Outcome> result = new CompletableFuture<>();
    result.whenComplete((o, e) -> {
      if (result.isCancelled()) {
        // Followers did not cancel anything: tell them what the operation is, as for any caller.
        ticket.result().completeExceptionally(new OperationPendingException("a concurrent execution of "
            + operation.id() + " was cancelled; the operation is PENDING and will be sent again with the same key",
            e, operation.id(), List.of(), null));
      } else if (e != null) {
        ticket.result().completeExceptionally(e);
      } else {
        ticket.result().complete(o);
      }
      singleFlight.leave(operation.id(), ticket);
    });
    new AsyncDriver(new AttemptLoop(settings, record, policyFor(operation)), operation.request(), operation.key(),
        transport, scheduler, result).start();
    return result;
  }

  /**
   * Re-drives a FAILED or UNCERTAIN operation: it becomes PENDING again with the same key and
   * snapshot, ready for {@link #execute} with the same operation, or for a resume.
   *
   * @throws IllegalStateException if the operation is in any other state
   */
  public OperationRecord redrive(OperationId id) throws IdempotencyException {
    return settings.journal().redrive(id, settings.clock().instant());
  }

  /** Looks an operation up by identity. */
  public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
    return settings.journal().find(id);
  }

  /** Looks operations up by the app's own reference, oldest first. */
  public List<OperationRecord> findByReference(String scope, String reference) throws IdempotencyException {
    return settings.journal().findByReference(scope, reference);
  }

  /** The journal this executor writes to. */
  public Journal journal() {
    return settings.journal();
  }

  private RetryPolicy policyFor(Operation operation) {
    return operation.policy().orElse(policy);
  }

  private OperationRecord begin(Operation operation) throws IdempotencyException {
    RequestSnapshot persisted = operation.request().withoutHeaders(secretHeaders);
    NewOperation op = new NewOperation(operation.id(), operation.reference().orElse(null),
        fingerprinter.fingerprint(persisted), persisted, settings.clock().instant());
    return settings.journal().begin(op).record();
  }

  private Outcome drive(AttemptLoop loop, RequestSnapshot request, IdempotencyKey key, Transport transport)
      throws IdempotencyException {
    Step step = loop.start();
    while (true) {
      if (step instanceof Step.Send) {
        ResponseSnapshot response;
        try {
          response = transport.send(request, key);
        } catch (IOException e) {
          if (Thread.currentThread().isInterrupted() || e.getClass() == InterruptedIOException.class) {
            throw loop.interrupted(true, e);
          }
          step = loop.onFailure(e);
          continue;
        } catch (RuntimeException e) {
          // A bug in the transport: the request may or may not have gone out.
          throw loop.interrupted(true, e);
        }
        step = loop.onResponse(response);
      } else if (step instanceof Step.Wait wait) {
        try {
          sleeper.sleep(wait.delay());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw loop.interrupted(false, e);
        }
        step = loop.afterWait();
      } else {
        return finish(step);
      }
    }
  }

  private static Outcome finish(Step step) throws IdempotencyException {
    if (step instanceof Step.Done done) {
      return done.outcome();
    }
    throw ((Step.Fail) step).exception();
  }

  private static CompletableFuture<Outcome> completed(Step step) {
    try {
      return CompletableFuture.completedFuture(finish(step));
    } catch (IdempotencyException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static Outcome awaitLeader(OperationId id, CompletableFuture<Outcome> leader) throws IdempotencyException {
    try {
      return leader.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new OperationPendingException("interrupted while waiting for a concurrent execution of " + id, e, id,
          List.of(), null);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IdempotencyException ie) {
        throw ie;
      }
      throw new CompletionException(e.getCause());
    } catch (java.util.concurrent.CancellationException e) {
      throw new OperationPendingException("a concurrent execution of " + id + " was cancelled", e, id, List.of(),
          null);
    }
  }

  /** Lazily created, so that purely synchronous users never start a thread. */
  private static final class DefaultScheduler {
    static final Scheduler INSTANCE = Scheduler.of(newExecutor());

    private static ScheduledExecutorService newExecutor() {
      return Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "idem-scheduler");
        t.setDaemon(true);
        return t;
      });
    }
  }

  /** Builds an {@link IdempotentExecutor}. Not thread-safe. */
  public static final class Builder {
    private Journal journal;
    private RetryPolicy policy = RetryPolicy.ofDefaults();
    private Classifier classifier = Classifier.defaults();
    private Fingerprinter fingerprinter = Fingerprinter.defaults();
    private Clock clock = Clock.systemUTC();
    private Sleeper sleeper = Sleeper.system();
    private Scheduler scheduler;
    private DoubleSupplier random = () -> ThreadLocalRandom.current().nextDouble();
    private String owner = "idem-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
    private Duration leaseFor = Duration.ofMinutes(2);
    private String replayHeader = "Idempotent-Replayed";
    private final Set<String> secretHeaders = new HashSet<>(RequestSnapshot.DEFAULT_SECRET_HEADERS);

    private Builder() {}

    /** The journal; default a new {@link InMemoryJournal} (keys do not survive a restart). */
    public Builder journal(Journal journal) {
      this.journal = Objects.requireNonNull(journal, "journal");
      return this;
    }

    /** The default retry policy; default {@link RetryPolicy#ofDefaults()}. */
    public Builder retryPolicy(RetryPolicy policy) {
      this.policy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /** The classifier; default {@link Classifier#defaults()}. */
    public Builder classifier(Classifier classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /** The fingerprinter; default {@link Fingerprinter#defaults()}. */
    public Builder fingerprinter(Fingerprinter fingerprinter) {
      this.fingerprinter = Objects.requireNonNull(fingerprinter, "fingerprinter");
      return this;
    }

    /** The clock; default {@link Clock#systemUTC()}. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** How synchronous execution waits; default {@link Sleeper#system()}. */
    public Builder sleeper(Sleeper sleeper) {
      this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
      return this;
    }

    /** How asynchronous execution waits; default one shared daemon thread. */
    public Builder scheduler(Scheduler scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Uniform values in [0, 1) for jitter; default {@link ThreadLocalRandom}. Must be thread-safe
     * if the executor is shared across threads.
     */
    public Builder random(DoubleSupplier random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /** The owner name written into leases; default {@code idem-<pid>-<random>}. */
    public Builder owner(String owner) {
      this.owner = Objects.requireNonNull(owner, "owner");
      return this;
    }

    /**
     * How long a claim lasts before another process may take the operation over; default 2
     * minutes. Keep it longer than the longest single attempt.
     */
    public Builder leaseFor(Duration leaseFor) {
      Objects.requireNonNull(leaseFor, "leaseFor");
      if (leaseFor.isZero() || leaseFor.isNegative()) {
        throw new IllegalArgumentException("leaseFor must be positive: " + leaseFor);
      }
      this.leaseFor = leaseFor;
      return this;
    }

    /** The response header that marks a server-side replay; default {@code Idempotent-Replayed}. */
    public Builder replayHeader(String replayHeader) {
      this.replayHeader = Objects.requireNonNull(replayHeader, "replayHeader");
      return this;
    }

    /**
     * More headers to keep out of the journal, in addition to Authorization, Proxy-Authorization,
     * Cookie and Set-Cookie (case-insensitive). The transport must re-apply them on every attempt.
     */
    public Builder secretHeaders(Set<String> names) {
      names.forEach(n -> secretHeaders.add(n.toLowerCase(Locale.ROOT)));
      return this;
    }

    /** Builds the executor. */
    public IdempotentExecutor build() {
      if (journal == null) {
        journal = new InMemoryJournal();
      }
      return new IdempotentExecutor(this);
    }
  }
}
