package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.http.HttpResponse;
import java.util.Optional;

/**
 * What one handler body answered on one Tomcat: {@code plain}, unguarded (the container's own
 * answer, the baseline), {@code guarded}, the first answer under a key in transactional mode, and
 * {@code replay}, the same key again. Made by {@link TransactionalTomcatTest#sameHandlerAnswers}.
 */
public record SameHandlerAnswers(HttpResponse<byte[]> plain, HttpResponse<byte[]> guarded,
    HttpResponse<byte[]> replay) {

  /** The baseline's first {@code header}. */
  public Optional<String> unguarded(String header) {
    return plain.headers().firstValue(header);
  }

  /** The third answer is a replay, not a second run. */
  public void assertReplayed() {
    assertEquals(Optional.of("true"), replay.headers().firstValue("Idempotent-Replayed"), "the replay");
  }

  /** The first answer and the replay carry {@code header} as the baseline does (its first value). */
  public void assertAsUnguarded(String header) {
    Optional<String> want = unguarded(header);
    assertEquals(want, guarded.headers().firstValue(header),
        header + " of the transactional route's first answer (unguarded: " + want + ")");
    assertEquals(want, replay.headers().firstValue(header), header + " of the replay (unguarded: " + want + ")");
  }

  /** The first answer and the replay carry the baseline's bytes. */
  public void assertBodiesAsUnguarded() {
    assertArrayEquals(plain.body(), guarded.body(), "the first answer's bytes, as the container encodes them");
    assertArrayEquals(plain.body(), replay.body(), "the replay's bytes");
  }
}
