package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import dev.idem.jdbc.JdbcJournal;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Error or a RuntimeException thrown on a thread other than main, while a command runs (the
 * journal's threads, its database driver's, a component a JDBC URL loads), was the JVM's: its
 * default handler printed a raw stack trace, and the command went on and could end with status 0.
 * Now it ends the command with one {@code idem: } line naming the thread and the failure, and
 * status 1, as an Error on the main thread does.
 *
 * <p>The failing component comes in through a seam the CLI has: an H2 URL's {@code INIT} setting,
 * which H2 runs as the connection opens. It defines a Java function of this test
 * ({@link FailingThread#fail}) and calls it; the function runs a thread of its own that throws, and
 * waits for it. Real child JVMs, since what is checked is the process: its standard error and its
 * exit status.
 */
class BackgroundThreadFailureTest {
  @TempDir
  Path dir;

  @Test
  void anErrorOnABackgroundThreadIsOneIdemLineAndStatusOne() throws Exception {
    ChildCli run = runWithFailingThread("error");
    assertEquals(1, run.code(), run.err());
    assertOneIdemLine(run, "java.lang.OutOfMemoryError: injected on a background thread");
  }

  @Test
  void aRuntimeExceptionOnABackgroundThreadIsOneIdemLineAndStatusOne() throws Exception {
    ChildCli run = runWithFailingThread("runtime");
    assertEquals(1, run.code(), run.err());
    assertOneIdemLine(run, "java.lang.IllegalStateException: injected on a background thread");
  }

  private ChildCli runWithFailingThread(String kind) throws Exception {
    String db = "jdbc:h2:file:" + dir.resolve("app-" + kind);
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL(db);
    ds.setUser("sa");
    // The app's journal, which the command would read and count: without the fix it printed the
    // thread's stack trace, then the counts, and ended with status 0.
    JdbcJournal.dataSource(ds).open().close();
    String url = db + ";INIT=CREATE ALIAS IF NOT EXISTS FAIL_IN_BACKGROUND FOR '" + FailingThread.class.getName()
        + ".fail'\\;CALL FAIL_IN_BACKGROUND('" + kind + "')";
    return ChildCli.run(dir, "journal", "stats", "--jdbc-url", url, "--user", "sa");
  }

  private static void assertOneIdemLine(ChildCli run, String failure) {
    String err = run.err();
    assertTrue(err.startsWith(IdemCli.PREFIX) && err.indexOf('\n') == err.length() - 1,
        "one idem: line, no stack trace:\n" + err);
    assertTrue(err.contains(failure) && err.contains(FailingThread.NAME), err);
    assertFalse(err.contains("\tat "), err);
    assertEquals("", run.out(), "the command did not go on to print a result");
  }
}
