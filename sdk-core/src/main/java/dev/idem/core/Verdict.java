package dev.idem.core;

import java.util.Objects;

/**
 * A classifier's answer for one attempt: its {@link Classification} and a short reason that is
 * recorded in the attempt history (so keep it free of secrets and personal data).
 *
 * @param classification the class
 * @param reason a short human-readable reason, such as {@code "HTTP 503"}
 */
public record Verdict(Classification classification, String reason) {
  /**
   * Validates the verdict.
   *
   * @param classification the class
   * @param reason a short human-readable reason, recorded in the attempt history
   * @throws NullPointerException if either component is null
   */
  public Verdict {
    Objects.requireNonNull(classification, "classification");
    Objects.requireNonNull(reason, "reason");
  }

  /**
   * Shorthand for a {@link Classification#SUCCESS} verdict.
   *
   * @param reason a short reason, recorded in the attempt history; free of secrets
   * @return a SUCCESS verdict
   */
  public static Verdict success(String reason) {
    return new Verdict(Classification.SUCCESS, reason);
  }

  /**
   * Shorthand for a {@link Classification#SAFE} verdict.
   *
   * @param reason a short reason, recorded in the attempt history; free of secrets
   * @return a SAFE verdict
   */
  public static Verdict safe(String reason) {
    return new Verdict(Classification.SAFE, reason);
  }

  /**
   * Shorthand for an {@link Classification#AMBIGUOUS} verdict.
   *
   * @param reason a short reason, recorded in the attempt history; free of secrets
   * @return a AMBIGUOUS verdict
   */
  public static Verdict ambiguous(String reason) {
    return new Verdict(Classification.AMBIGUOUS, reason);
  }

  /**
   * Shorthand for a {@link Classification#TRANSIENT} verdict.
   *
   * @param reason a short reason, recorded in the attempt history; free of secrets
   * @return a TRANSIENT verdict
   */
  public static Verdict transientFailure(String reason) {
    return new Verdict(Classification.TRANSIENT, reason);
  }

  /**
   * Shorthand for a {@link Classification#PERMANENT} verdict.
   *
   * @param reason a short reason, recorded in the attempt history; free of secrets
   * @return a PERMANENT verdict
   */
  public static Verdict permanent(String reason) {
    return new Verdict(Classification.PERMANENT, reason);
  }
}
