package dev.idem.examples.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.nio.file.Path;
import java.util.List;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the copyable samples honest: each runs against the reference server, and the server's
 * effect counts show it did what its comment says. This class is also the "testing your own
 * client with sdk-testkit" sample.
 */
class SamplesTest {
  @RegisterExtension
  final IdempotentServerExtension idem = new IdempotentServerExtension();

  @TempDir
  Path dir;

  @Test
  void retrofitCreatesExactlyOneOrder(IdempotentServer server) throws Exception {
    String body = RetrofitSample.run(server, dir.resolve("j"));
    assertTrue(body.contains("\"effect\":1"), body);
    assertEquals(1, server.totalEffects());
    assertEquals(1, server.keysSeen().size(), "one key for the one logical operation");
  }

  /**
   * The README's rule: every request on the wire is a journaled attempt. The sample used
   * addInterceptor instead of install, which left OkHttp's own retryOnConnectionFailure on: a
   * request that fails on a pooled connection is then repeated below Idem, where the journal
   * cannot count it. The sample's client is built as the README says: Idem's interceptor first,
   * the silent retry off.
   */
  @Test
  void retrofitsClientIsInstalledAsTheReadmeSays() {
    IdemOkHttp idem = IdemOkHttp.create(new InMemoryJournal());
    OkHttpClient client = RetrofitSample.client(idem);
    // install changes no client setting: keyed attempts run without OkHttp's own follow-ups, and
    // its network interceptor refuses any second request of one attempt.
    assertEquals(1, client.networkInterceptors().size(), "install adds Idem's network interceptor");
    assertSame(idem.interceptor(), client.interceptors().get(0), "Idem's interceptor runs before the app's");
    assertEquals(2, client.interceptors().size(), "and the one that adds Authorization after it");
  }

  /** A lost response is retried by Idem with the same key: the server saw exactly the journaled attempts. */
  @Test
  void retrofitSendsNoRequestTheJournalDoesNotCount(IdempotentServer server) throws Exception {
    server.plan().next(Fault.commitThenDropResponse());
    String body = RetrofitSample.run(server, dir.resolve("j"));
    assertTrue(body.contains("\"effect\":1"), body);
    assertEquals(1, server.totalEffects());
    assertEquals(1, server.keysSeen().size(), "one key for the one logical operation");
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir.resolve("j"))) {
      List<OperationRecord> ops = journal.findByReference("default", "cart-42");
      assertEquals(1, ops.size());
      assertEquals(server.requestCount(), ops.get(0).attempts().size(),
          "requests the server received = attempts the journal recorded");
    }
  }

  @Test
  void javaHttpClientSyncAndAsyncEachCreateOneOrder(IdempotentServer server) throws Exception {
    List<String> bodies = JavaHttpClientSample.run(server, dir.resolve("j"));
    assertEquals(2, bodies.size());
    assertEquals(2, server.totalEffects());
    assertEquals(2, server.keysSeen().size(), "two operations, two keys");
    server.recordedRequests().forEach(r -> assertTrue(r.keyHeader().isPresent()));
  }

  @Test
  void resumeDeliversTheJournaledOrderOnceWithItsKey(IdempotentServer server) throws Exception {
    List<String> log = ResumeOnRestartSample.run(server, dir.resolve("j"));
    assertTrue(log.stream().anyMatch(l -> l.startsWith("order delivered")), log.toString());
    assertTrue(log.contains("cart-99 is SUCCEEDED"), log.toString());
    assertEquals(1, server.totalEffects());
  }

  @Test
  void customClassifierRetriesThroughTransient404s(IdempotentServer server) throws Exception {
    assertEquals(201, CustomPolicySample.run(server));
    assertEquals(3, server.requestCount(), "two 404s, then the created account");
    assertEquals(1, server.totalEffects());
    assertEquals(1, server.keysSeen().size(), "the same key on all three attempts");
  }
}
