package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (symbolic links): the guard's read-only open (the CLI's {@code guard} commands) of a
 * database file that links into a directory that does not exist (a volume not mounted yet). The
 * service's open says so; the read-only open wrapped the same JournalException as a failure to
 * resolve the real path, with the exception's class name in the middle of the line.
 */
class ReviewGuardReadOnlyLinkMessageTest {
  @TempDir
  Path tmp;

  @Test
  void aReadOnlyOpenOfALinkIntoAMissingDirectorySaysSoAsTheServicesOpenDoes() throws Exception {
    Path target = tmp.resolve("volume/idem.db");
    Path link = Files.createSymbolicLink(tmp.resolve("idem.db"), target);

    IdempotencyStoreException service = assertThrows(IdempotencyStoreException.class,
        () -> JdbcIdempotencyStore.sqlite(link));
    IdempotencyStoreException readOnly = assertThrows(IdempotencyStoreException.class,
        () -> JdbcIdempotencyStore.openReadOnly(link));

    assertFalse(readOnly.getMessage().contains("JournalException"), readOnly.getMessage());
    assertFalse(readOnly.getMessage().contains("cannot resolve the real path"), readOnly.getMessage());
    assertTrue(readOnly.getMessage().contains(target.toString()), readOnly.getMessage());
    assertTrue(service.getMessage().endsWith(readOnly.getMessage()),
        "the same reason as the service's open: " + service.getMessage() + " / " + readOnly.getMessage());
  }
}
