package dev.idem.core.resume;

import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import java.util.Objects;

/**
 * A {@link Reconciler}'s finding about one UNCERTAIN operation.
 *
 * @param settledAs SUCCEEDED, FAILED, or UNCERTAIN for "still unknown"
 * @param response for SUCCEEDED, the response that proves it; otherwise null
 * @param reason what the reconciler found, recorded in the journal
 */
public record Reconciliation(OperationState settledAs, ResponseSnapshot response, String reason) {
  /**
   * Validates the finding.
   *
   * @param settledAs SUCCEEDED, FAILED, or UNCERTAIN for "still unknown"
   * @param response for SUCCEEDED, the response that proves it; otherwise null
   * @param reason what the reconciler found, recorded in the journal
   * @throws IllegalArgumentException if {@code settledAs} is not terminal, or is SUCCEEDED without
   *     a response
   * @throws NullPointerException if {@code settledAs} or {@code reason} is null
   */
  public Reconciliation {
    Objects.requireNonNull(settledAs, "settledAs");
    Objects.requireNonNull(reason, "reason");
    if (!settledAs.isTerminal()) {
      throw new IllegalArgumentException("a reconciliation settles as SUCCEEDED, FAILED or UNCERTAIN, not " + settledAs);
    }
    if (settledAs == OperationState.SUCCEEDED && response == null) {
      throw new IllegalArgumentException("SUCCEEDED needs the response that proves it");
    }
  }

  /**
   * The operation took effect; {@code proof} is the server's answer (for example the GET).
   *
   * @param proof the server's answer that shows the effect exists; stored as the operation's
   *     response
   * @param reason what the reconciler found
   * @throws NullPointerException if {@code proof} or {@code reason} is null
   * @return a SUCCEEDED finding
   */
  public static Reconciliation succeeded(ResponseSnapshot proof, String reason) {
    return new Reconciliation(OperationState.SUCCEEDED, Objects.requireNonNull(proof, "proof"), reason);
  }

  /**
   * The operation did not take effect, and will not.
   *
   * @param reason what the reconciler found
   * @throws NullPointerException if {@code reason} is null
   * @return a FAILED finding
   */
  public static Reconciliation failed(String reason) {
    return new Reconciliation(OperationState.FAILED, null, reason);
  }

  /**
   * Still unknown; the operation stays UNCERTAIN.
   *
   * @param reason what the reconciler found
   * @throws NullPointerException if {@code reason} is null
   * @return an UNCERTAIN finding, which changes nothing
   */
  public static Reconciliation unknown(String reason) {
    return new Reconciliation(OperationState.UNCERTAIN, null, reason);
  }
}
