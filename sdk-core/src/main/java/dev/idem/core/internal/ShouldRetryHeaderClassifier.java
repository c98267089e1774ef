package dev.idem.core.internal;

import dev.idem.core.Classifier;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.Verdict;
import java.io.IOException;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/** See {@link Classifier#shouldRetryHeader(String)}. Immutable. */
public final class ShouldRetryHeaderClassifier implements Classifier {
  private final String headerName;
  /** {@link #headerName} lower-case, as the snapshots' names are: looked up without a copy per response. */
  private final String headerKey;

  public ShouldRetryHeaderClassifier(String headerName) {
    this.headerName = Objects.requireNonNull(headerName, "headerName");
    this.headerKey = headerName.toLowerCase(Locale.ROOT);
  }

  @Override
  public Optional<Verdict> classify(ResponseSnapshot response) {
    if (response.isSuccessful()) {
      return Optional.empty();
    }
    return response.header(headerKey).map(v -> v.trim().toLowerCase(Locale.ROOT)).flatMap(v -> switch (v) {
      // "Retry" is not "nothing happened": a status the default table says may follow the effect
      // stays AMBIGUOUS, so that giving up after it ends UNCERTAIN, not FAILED.
      case "true" -> Optional.of(DefaultClassifier.mayFollowEffect(response)
          ? Verdict.ambiguous("HTTP " + response.status() + ", " + headerName + ": true; the server may have acted")
          : Verdict.transientFailure("HTTP " + response.status() + ", " + headerName + ": true"));
      // "Do not retry" is not "nothing happened" either: on such a status a PERMANENT verdict would end
      // the operation FAILED while the effect may exist. No opinion there, so the next classifier (the
      // default table: AMBIGUOUS) decides; retries carry the same key, which a server that stored its
      // answer replays.
      case "false" -> DefaultClassifier.mayFollowEffect(response) ? Optional.<Verdict>empty()
          : Optional.of(Verdict.permanent("HTTP " + response.status() + ", " + headerName + ": false"));
      default -> Optional.<Verdict>empty();
    });
  }

  @Override
  public Optional<Verdict> classify(IOException failure) {
    return Optional.empty();
  }
}
