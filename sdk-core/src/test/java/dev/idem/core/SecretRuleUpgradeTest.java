package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.URI;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An operation journaled by a version whose rule did not name {@code ?key=}, {@code ?sig=} or
 * {@code ;jsessionid=}: already in the journal, so re-sending it exactly is what the guarantee
 * needs. A resume sends it as journaled; only a caller's new call with that URI is refused.
 */
class SecretRuleUpgradeTest {
  private static final String[] URIS = {"https://maps.example.test/geo?address=Paris&key=AIzaOld",
      "https://a.blob.core.windows.net/c/b?sv=2022-11-02&sp=rw&sig=old-sig",
      "https://shop.example.test/cart;jsessionid=old-session/checkout"};

  /** What the older version journaled: the request as given, PENDING, never sent. */
  private static Operation journaledBeforeTheUpgrade(Harness h, String name, String uri) throws Exception {
    Operation op = Operation.builder(name, Requests.postJson(uri, "{}")).build();
    RequestSnapshot request = op.request();
    h.journal.begin(new NewOperation(op.id(), null, Fingerprinter.defaults().fingerprint(request), request,
        h.time.clock().instant(), false));
    return op;
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2})
  void aCallersRetryIsRefusedButResumePendingSendsTheJournaledRequestExactly(int which) throws Exception {
    Harness h = new Harness();
    Operation op = journaledBeforeTheUpgrade(h, "pay", URIS[which]);

    ScriptedTransport refused = h.transport(op);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.executor.execute(op, refused));
    assertTrue(e.getMessage().contains("allowQueryParameters"), e.getMessage());
    assertEquals(0, refused.count());
    assertEquals(OperationState.PENDING, h.record(op).state(), "left in the journal as it was");

    ScriptedTransport t = h.transport(op).then(status(201));
    ResumeSummary summary = h.executor.resumePending(Map.of("pay",
        ResumeHandler.of(t, o -> { }, f -> { throw new AssertionError(f); })));

    assertEquals(1, summary.succeeded(), summary.toString());
    assertEquals(1, t.count());
    assertEquals(URI.create(URIS[which]), t.sent().get(0).request().uri(), "sent as journaled");
    assertEquals(op.id().key(), t.sent().get(0).key(), "with its journaled key");
    assertEquals(OperationState.SUCCEEDED, h.record(op).state());
  }

  @Test
  void resumeByIdSendsItAsJournaledToo() throws Exception {
    Harness h = new Harness();
    Operation op = journaledBeforeTheUpgrade(h, "pay", URIS[0]);
    ScriptedTransport t = h.transport(op).then(status(201));

    h.executor.resume(op.id(), t);

    assertEquals(URI.create(URIS[0]), t.sent().get(0).request().uri());
    assertEquals(OperationState.SUCCEEDED, h.record(op).state());
  }
}
