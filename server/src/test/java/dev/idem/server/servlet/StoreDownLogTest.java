package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildJvm;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * While the guard's store is down, the Servlet filter and the JDK HttpServer filter answer every
 * keyed request 503 but log the outage with its stack trace once, not once per request (which at
 * thousands of requests per second floods the log). Run in a child JVM, whose log (slf4j-simple on
 * stderr) is read as it is: no hook into the logging of this JVM.
 */
class StoreDownLogTest {
  @TempDir
  Path tmp;

  @Test
  void aStoreOutageIsLoggedOnceWithItsStackTracePerFilterNotOncePerRequest() throws Exception {
    ChildJvm.Result child = ChildJvm.run(tmp, StoreDownLogChild.class, "40");

    String out = child.output();
    assertEquals(0, child.exitCode(), out);
    assertTrue(out.contains("statuses {503=80}"), out);
    assertEquals(1, count(out, "ERROR dev.idem.server.servlet.IdempotencyFilter - Idempotency store unavailable"), out);
    assertEquals(1, count(out, "ERROR dev.idem.server.jdkhttp.IdempotencyHttpFilter - Idempotency store unavailable"),
        out);
    assertEquals(2, count(out, "dev.idem.server.IdempotencyStoreException: store down"), "one stack trace per filter");
  }

  /**
   * The same for results the store does not take (each request admitted, its result sent, the store
   * then failing) and for a transactional route whose database gives no connection: once with the
   * stack trace, not once per request.
   */
  @Test
  void resultsTheStoreDoesNotTakeAndFailedTransactionsAreLoggedOnceNotOncePerRequest() throws Exception {
    ChildJvm.Result child = ChildJvm.run(tmp, StoreDownLogChild.class, "40", "complete");

    String out = child.output();
    assertEquals(0, child.exitCode(), out);
    assertTrue(out.contains("statuses {201=80, 500=40}"), out);
    assertEquals(1, count(out, "ERROR dev.idem.server.servlet.IdempotencyFilter - Could not store the result"), out);
    assertEquals(1, count(out, "ERROR dev.idem.server.jdkhttp.IdempotencyHttpFilter - Could not store the result"),
        out);
    assertEquals(1, count(out, "ERROR dev.idem.server.jdkhttp.IdempotencyHttpFilter - A transactional handler"
        + " failed"), out);
    assertEquals(1, count(out, "java.sql.SQLException: connection refused"), "one stack trace");
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
