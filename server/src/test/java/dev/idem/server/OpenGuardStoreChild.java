package dev.idem.server;

import java.nio.file.Path;

/**
 * A child JVM that opens an embedded SQLite guard store ({@link JdbcIdempotencyStore#sqlite(Path)}).
 * Prints the outcome and exits 0 if the open was refused ({@link IdempotencyStoreException}), 1 if
 * it succeeded, 2 on anything else.
 */
public final class OpenGuardStoreChild {
  private OpenGuardStoreChild() {}

  public static void main(String[] args) {
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(Path.of(args[0]))) {
      System.out.println("OPENED " + store);
      System.exit(1);
    } catch (IdempotencyStoreException e) {
      System.out.println("REFUSED " + e.getMessage());
      System.exit(0);
    } catch (Throwable t) {
      System.out.println("OTHER " + t);
      System.exit(2);
    }
  }
}
