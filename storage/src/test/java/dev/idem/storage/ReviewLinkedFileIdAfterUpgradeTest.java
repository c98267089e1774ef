package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (symbolic links, upgrade): a store in an app's file (the guard's) reached through a link
 * kept its id file beside the link ({@code link.db.id}) before its companion files moved beside
 * the target. After the move, the open looks for {@code real.db.id} only: the old id file is
 * ignored, and since the database already stores an id, nothing is written beside the target
 * either. The store silently loses its check against a database file swapped for another store's,
 * for good.
 */
class ReviewLinkedFileIdAfterUpgradeTest {
  private static final Schema SCHEMA = new Schema("test store", ReviewLinkedFileIdAfterUpgradeTest.class,
      "dev/idem/storage/testschema/", "test_version", "test_meta", Schema.Adoption.NONE);

  @TempDir
  Path tmp;

  /** A store made through a link by the version before the move: its id file is beside the link. */
  private Path[] storeOfTheOldVersion() throws Exception {
    Path volume = Files.createDirectories(tmp.resolve("volume"));
    Path app = Files.createDirectories(tmp.resolve("app"));
    Path real = volume.resolve("real.db");
    open(real);
    Files.move(volume.resolve("real.db.id"), app.resolve("link.db.id"));
    Path link = Files.createSymbolicLink(app.resolve("link.db"), real);
    return new Path[] {link, real};
  }

  private void swapInAnotherStoresDatabase(Path real) throws Exception {
    Path other = Files.createDirectories(tmp.resolve("other")).resolve("other.db");
    open(other);
    Files.copy(other, real, StandardCopyOption.REPLACE_EXISTING);
  }

  @Test
  void aDatabaseSwappedBeforeTheFirstOpenAfterTheUpgradeIsRefused() throws Exception {
    Path[] files = storeOfTheOldVersion();
    swapInAnotherStoresDatabase(files[1]);

    JournalException e = assertThrows(JournalException.class, () -> open(files[0]));
    assertTrue(e.getMessage().contains("link.db.id"), "names the id file it checked: " + e.getMessage());
  }

  @Test
  void theIdCarriedOverBesideTheTargetKeepsRefusingASwapAfterTheUpgrade() throws Exception {
    Path[] files = storeOfTheOldVersion();
    String id = Files.readString(tmp.resolve("app/link.db.id"), StandardCharsets.US_ASCII);

    open(files[0]);
    assertEquals(id, Files.readString(tmp.resolve("volume/real.db.id"), StandardCharsets.US_ASCII));

    swapInAnotherStoresDatabase(files[1]);
    assertThrows(JournalException.class, () -> open(files[0]));
    assertThrows(JournalException.class, () -> open(files[1]));
  }

  /** No id file anywhere (lost), the database storing one: the open writes it, so the check holds from now on. */
  @Test
  void aStoreWithoutAnIdFileGetsItsDatabasesIdWritten() throws Exception {
    Path real = Files.createDirectories(tmp.resolve("volume")).resolve("real.db");
    open(real);
    Path idFile = tmp.resolve("volume/real.db.id");
    Files.delete(idFile);

    open(real);

    assertTrue(Files.exists(idFile), "the database's id written back");
    swapInAnotherStoresDatabase(real);
    assertThrows(JournalException.class, () -> open(real));
  }

  private static void open(Path file) throws Exception {
    new StoreOpener(SCHEMA, false, Duration.ofHours(1), Clock.systemUTC()).openEmbedded(
        Layout.file(file, "test store", "T"), (name, dialect, store, version, opened) -> {
          opened.close(store, "test");
          return null;
        });
  }
}
