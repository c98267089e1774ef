package dev.idem.webhooks;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Decides whether a handler's exception is worth retrying. Classifiers compose like sdk-core's
 * {@code Classifier}: each may abstain, and {@link #orElse} asks the next. Put special cases first:
 *
 * <pre>{@code
 * HandlerFailureClassifier c = HandlerFailureClassifier.forType(ValidationException.class, FailureKind.PERMANENT)
 *     .orElse(HandlerFailureClassifier.defaults());
 * }</pre>
 *
 * <p>If every classifier abstains, the failure is retried. Implementations must be thread-safe.
 * A RuntimeException thrown by a classifier (or a null answer) is the app's bug, not a verdict: the
 * processor retries the failure as if every classifier abstained, logs a warning that names the
 * exception's class (never its message), and records it in the run's decision.
 */
@FunctionalInterface
public interface HandlerFailureClassifier {
  /**
   * {@return the kind, or empty for no opinion}
   *
   * @param failure what the handler threw
   */
  Optional<FailureKind> classify(Throwable failure);

  /**
   * {@return the chain}
   *
   * @param next asked when this one abstains
   */
  default HandlerFailureClassifier orElse(HandlerFailureClassifier next) {
    Objects.requireNonNull(next, "next");
    return t -> {
      Optional<FailureKind> k = classify(t);
      return k.isPresent() ? k : next.classify(t);
    };
  }

  /**
   * The default: {@link PermanentWebhookException} (anywhere in the cause chain) is PERMANENT,
   * anything else is RETRY.
   *
   * @return the default classifier; it always answers
   */
  static HandlerFailureClassifier defaults() {
    return t -> {
      // Each cause once: a chain may loop (a -> b -> a; initCause refuses only a self-cause), and
      // following it round would hang the worker that is recording the failure.
      Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
      for (Throwable c = t; c != null && seen.add(c); c = c.getCause()) {
        if (c instanceof PermanentWebhookException) {
          return Optional.of(FailureKind.PERMANENT);
        }
      }
      return Optional.of(FailureKind.RETRY);
    };
  }

  /**
   * {@return a classifier that answers {@code kind} for {@code type} and abstains otherwise}
   *
   * @param type an exception class; its subclasses match too
   * @param kind the kind for it
   */
  static HandlerFailureClassifier forType(Class<? extends Throwable> type, FailureKind kind) {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(kind, "kind");
    return t -> type.isInstance(t) ? Optional.of(kind) : Optional.empty();
  }
}
