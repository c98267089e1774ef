package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildJvm;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guard's own logs of a store outage, like the filters' ({@code servlet.StoreDownLogTest}): once
 * per concern with its stack trace, not once per request or per retry of each request's completion.
 * Run in a child JVM, whose log (slf4j-simple at WARN on stderr) is read as it is.
 */
class GuardStoreDownLogTest {
  private static final int REQUESTS = 30;

  @TempDir
  Path tmp;

  /**
   * Each request's completion fails and is tried again in the background until given up: one line
   * per concern (the first failure, a failed retry, a stored and a released completion given up),
   * however many claims and retries.
   */
  @Test
  void completionsRetriedAndGivenUpAreLoggedOncePerConcernNotPerClaimOrRetry() throws Exception {
    ChildJvm.Result child = ChildJvm.run(tmp, GuardStoreDownLogChild.class, "retries", String.valueOf(REQUESTS));

    String out = child.output();
    assertEquals(0, child.exitCode(), out);
    assertTrue(out.contains("ended " + REQUESTS), out);
    assertEquals(1, count(out, "ERROR dev.idem.server.IdempotencyGuard - Gave up storing"), out);
    assertEquals(1, count(out, "WARN dev.idem.server.IdempotencyGuard - Gave up trying to release"), out);
    int lines = count(out, "WARN dev.idem.server.IdempotencyGuard - ")
        + count(out, "ERROR dev.idem.server.IdempotencyGuard - ");
    assertTrue(lines <= 5, lines + " lines:\n" + out);
    assertTrue(count(out, "dev.idem.server.IdempotencyStoreException: store down") <= 5, out);
  }

  /** Transactional runs whose commit fails, each answered 503: logged once with the stack trace. */
  @Test
  void failedTransactionalRunsAreLoggedOnceNotOncePerRequest() throws Exception {
    ChildJvm.Result child = ChildJvm.run(tmp, GuardStoreDownLogChild.class, "transactional",
        String.valueOf(REQUESTS), tmp.resolve("app.db").toString());

    String out = child.output();
    assertEquals(0, child.exitCode(), out);
    assertTrue(out.contains("statuses {503=" + REQUESTS + "}"), out);
    assertEquals(1, count(out, "ERROR dev.idem.server.TransactionalRun - Transactional"), out);
    assertEquals(1, count(out, "java.sql.SQLException: disk I/O error"), "one stack trace:\n" + out);
  }

  private static int count(String text, String what) {
    Matcher m = Pattern.compile(Pattern.quote(what)).matcher(text);
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }
}
