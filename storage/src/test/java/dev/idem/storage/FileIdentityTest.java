package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileIdentityTest {
  @TempDir
  Path dir;

  @Test
  void theSameFileWrittenToIsUnchanged() throws Exception {
    Path db = Files.writeString(dir.resolve("a.db"), "one");
    FileIdentity opened = FileIdentity.of(db);
    Files.writeString(db, "one and more");
    assertNull(opened.change());
  }

  @Test
  void aRemovedFileIsGone() throws Exception {
    Path db = Files.writeString(dir.resolve("a.db"), "one");
    FileIdentity opened = FileIdentity.of(db);
    Files.delete(db);
    assertEquals("it is gone", opened.change());
  }

  @Test
  void aCopyPutInItsPlaceIsAnotherFile() throws Exception {
    Path db = Files.writeString(dir.resolve("a.db"), "one");
    FileIdentity opened = FileIdentity.of(db);
    Path copy = Files.copy(db, dir.resolve("copy"), StandardCopyOption.COPY_ATTRIBUTES);
    Files.move(copy, db, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    assertEquals("another file is in its place", opened.change());
  }

  @Test
  void withoutAFileKeyTheCreationTimeTellsFilesApart() throws Exception {
    Path db = Files.writeString(dir.resolve("a.db"), "one");
    FileTime created = Files.readAttributes(db, java.nio.file.attribute.BasicFileAttributes.class).creationTime();
    assertNull(new FileIdentity(db, null, created).change());
    assertEquals("another file is in its place",
        new FileIdentity(db, null, FileTime.fromMillis(created.toMillis() - 86_400_000L)).change());
  }
}
