package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildJvm;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * The inbox's single-owner locks are POSIX locks, which the kernel drops for the whole process when
 * the process closes any descriptor of the lock file. A second open of the same inbox in this JVM
 * (a second Spring context, a retry around the open) used to open the lock file, be refused, and
 * close it: the live inbox lost its lock, and another process could open the inbox and take its
 * claimed deliveries for a dead process's. The refusal now opens no descriptor of the lock file.
 */
class RefusedSecondOpenKeepsTheLockTest {
  @TempDir
  Path tmp;

  @Test
  void aRefusedSecondOpenInThisJvmStillKeepsAnotherProcessOut() throws Exception {
    Path dir = tmp.resolve("inbox");
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      // The embedded open holds two locks: the directory's, which a second embedded open tries
      // first, and the database file's, which any open through a SQLite DataSource tries.
      WebhookInboxException refused = assertThrows(WebhookInboxException.class,
          () -> WebhookInbox.sqlite(dir).open());
      assertTrue(refused.getMessage().contains("already open in this JVM"), refused.getMessage());
      SQLiteDataSource file = new SQLiteDataSource();
      file.setUrl("jdbc:sqlite:" + dir.resolve("inbox.db"));
      WebhookInboxException refusedToo = assertThrows(WebhookInboxException.class,
          () -> WebhookInbox.postgres(file).open());
      assertTrue(refusedToo.getMessage().contains("already open in this JVM"), refusedToo.getMessage());

      ChildJvm.Result other = ChildJvm.run(tmp, OpenInboxChild.class, dir.toString());

      assertEquals(0, other.exitCode(), "another process opened the inbox this JVM has open: " + other.output());
      assertTrue(other.output().contains("open in another process"), other.output());
    }
    try (WebhookInbox reopened = WebhookInbox.sqlite(dir).open()) {
      assertTrue(reopened.counts().values().stream().allMatch(n -> n == 0), "closed, the inbox opens again");
    }
  }
}
