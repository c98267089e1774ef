package dev.idem.examples.exit;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationState;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The app's own side of each order, in the exit tests' apps: what the caller was told (printed as
 * {@code TOLD <key> <state>}, {@code WAITING} when the outbox had not answered yet), and the
 * orders it confirmed, one key per line appended to a file (the README's {@code orders.confirm}),
 * which the process's end cannot undo: each line is one write to the OS. A key twice in that file
 * is an order confirmed twice.
 */
final class Orders {
  private final Path confirmations;

  Orders(Path confirmations) {
    this.confirmations = confirmations;
  }

  void told(IdempotencyKey key, Object state) {
    System.out.println("TOLD " + key.value() + " " + state);
  }

  synchronized void confirm(IdempotencyKey key) {
    try {
      Files.writeString(confirmations, key.value() + "\n", StandardCharsets.US_ASCII, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the confirmations file", e);
    }
    System.out.println("CONFIRMED " + key.value());
  }

  void flag(IdempotencyKey key, OperationState state) {
    System.out.println("FLAGGED " + key.value() + " " + state);
  }
}
