package dev.idem.core.spi;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The one safety rule of taking an operation over from a holder that may have died: unless the
 * attempt of the holder's generation was recorded, it may have been sent and taken effect, so it
 * counts as an AMBIGUOUS attempt, and giving up later ends UNCERTAIN, never FAILED.
 *
 * <p>The executor applies it after every claim whose {@link Lease#takeover()} is true; a
 * {@link Journal} implementation does not. A journal that defers writes and settles what a crash
 * left behind when it reopens (the embedded JDBC journal does) builds the attempt it records with
 * {@link #owedAttempt}, so that both paths record the same attempt.
 *
 * <p>Stateless and thread-safe.
 */
public final class Takeover {
  /** The reason of the AMBIGUOUS attempt this rule records. */
  public static final String REASON =
      "the process that held this attempt stopped while it may have been in flight";

  private Takeover() {
  }

  /**
   * The AMBIGUOUS attempt owed for a holder of {@code generation} that may have sent its attempt,
   * unless one of that generation is already recorded.
   *
   * @param attempts the operation's recorded attempts, in order
   * @param generation the generation the holder claimed under
   * @param now when the holder was found gone; the attempt starts and ends at it
   * @return the attempt to append (numbered after {@code attempts}), or empty if the attempt of
   *     {@code generation} is recorded
   * @throws NullPointerException if {@code attempts} or {@code now} is null
   */
  public static Optional<AttemptRecord> owedAttempt(List<AttemptRecord> attempts, long generation, Instant now) {
    Objects.requireNonNull(now, "now");
    for (AttemptRecord a : attempts) {
      if (a.generation() == generation) {
        return Optional.empty();
      }
    }
    return Optional.of(new AttemptRecord(attempts.size() + 1, generation, now, now, Classification.AMBIGUOUS, null,
        null, REASON, Duration.ZERO, "recovered: resend with the same key"));
  }
}
