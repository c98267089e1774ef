package dev.idem.core.internal;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.Outcome;
import dev.idem.core.spi.AsyncTransport;
import java.util.concurrent.CompletableFuture;

/**
 * What sdk-core's own engines (the outbox dispatcher) and its adapter support
 * ({@code AdapterSupport}) may ask of an {@link IdempotentExecutor} that its public API does not
 * offer. {@code IdempotentExecutor} installs the one implementation
 * when its class is initialized, as the JDK shares internals between its own packages: an engine
 * holds an executor, so the class is initialized before the engine asks.
 *
 * <p>Why not a public method: the engine's calls differ from the app's only in whose they are, and
 * the API the app sees stays the one it uses. Thread-safe.
 */
public abstract class ExecutorAccess {
  private static volatile ExecutorAccess installed;

  protected ExecutorAccess() {}

  /**
   * Installs the implementation; called once, by {@code IdempotentExecutor}.
   *
   * @throws IllegalStateException if one is installed already
   */
  public static synchronized void install(ExecutorAccess access) {
    if (installed != null) {
      throw new IllegalStateException("ExecutorAccess is installed by IdempotentExecutor only, once");
    }
    installed = access;
  }

  /**
   * The implementation {@code IdempotentExecutor} installed.
   *
   * @throws IllegalStateException if none is (the executor's class is not initialized yet, which
   *     cannot happen to a caller that holds an executor)
   */
  public static ExecutorAccess get() {
    ExecutorAccess access = installed;
    if (access == null) {
      throw new IllegalStateException("IdempotentExecutor is not initialized yet");
    }
    return access;
  }

  /**
   * {@link IdempotentExecutor#resumeAsync} for an engine's delivery: refused in the same way once the
   * executor is closed, but it leaves a background failure the executor has not reported yet for the
   * app's next call, to which the executor promised it (the engine would only log it).
   *
   * <p>{@code asRead} is the record as the engine read it (a due page, its own re-read): one that
   * changed since, and is not due any more (another instance sent it and journaled it PENDING until
   * its backoff or the server's Retry-After), is not sent: the delivery ends PENDING. The journal's
   * claim takes any PENDING operation, so it would go out again at once.
   *
   * @throws IllegalStateException at once, if the executor is closed; nothing was sent
   * @throws NullPointerException at once, if {@code asRead} or {@code transport} is null
   */
  public abstract CompletableFuture<Outcome> resumeAsync(IdempotentExecutor executor, OperationRecord asRead,
      AsyncTransport transport);

  /**
   * Whether an execution of {@code id} runs in {@code executor} now (an app's inline call on the
   * wire, say): an outbox dispatcher leaves such an operation, which its due page lists under this
   * owner's live lease, to that execution, instead of joining it as a delivery of its own.
   */
  public abstract boolean runsHere(IdempotentExecutor executor, OperationId id);

  /** {@code executor}'s lifecycle, for {@code CallCancel}: its per-call cancel marks. */
  public abstract ExecutorLifecycle lifecycle(IdempotentExecutor executor);

  /** {@code executor}'s secret rule, with the app's allowances: for an adapter's untagged calls. */
  public abstract SecretFilter secrets(IdempotentExecutor executor);
}
