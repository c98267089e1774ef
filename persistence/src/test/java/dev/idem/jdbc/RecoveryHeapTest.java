package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildJvm;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The recovery at open after a crash reads the rows in doubt (IN_FLIGHT, and inline PENDING never
 * durably claimed) 500 at a time; it needs their attempts, never their requests or responses. It
 * read them whole, so a process that crashed with 80 operations of 500 KB bodies begun (the
 * journal's default limit is 512 KiB) could not open its journal again in a 64 MiB heap: every
 * restart ran out of memory in the open.
 */
class RecoveryHeapTest {
  @TempDir
  Path tmp;

  @Test
  void aCrashWithEightyLargeRequestsBegunReopensInA64MiBHeap() throws Exception {
    Path dir = tmp.resolve("journal");
    ChildJvm.Result crash = ChildJvm.run(tmp, RecoveryHeapChild.class, "begin", dir.toString(), "80");
    assertTrue(crash.output().contains("begun"), crash.output());
    ChildJvm.Result reopen = ChildJvm.run(tmp, List.of("-Xmx64m"), RecoveryHeapChild.class, "open", dir.toString());
    assertEquals(0, reopen.exitCode(), reopen.output());
    assertTrue(reopen.output().contains("opened, 80 pending"), reopen.output());
  }
}
