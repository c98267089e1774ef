package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.client;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.URI;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A URL fragment ({@code #access_token=...}, as OAuth's implicit flow hands out) never goes on the
 * wire, but the adapter's snapshot of the request carried it into the journal in clear. Both ways
 * in (a call through the interceptor, and enqueue for later delivery) journal the URL without it;
 * the request on the wire is the same.
 */
class FragmentNotJournaledTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  private URI withFragment(IdempotentServer server) {
    return URI.create(server.url("/orders") + "?currency=EUR#access_token=qzPLANTfragment");
  }

  @Test
  void aCallJournalsItsUrlWithoutTheFragment() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = f.idem();
    OkHttpClient client = client(idem);
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = client.newCall(Fixture.order(withFragment(server), op)).execute()) {
      assertEquals(201, r.code());
    }
    OperationRecord rec = f.record(op);
    assertNull(rec.request().uri().getRawFragment(), rec.request().uri().toString());
    assertEquals("currency=EUR", rec.request().uri().getRawQuery());
    assertFalse(rec.request().uri().toString().contains("qzPLANT"), rec.request().uri().toString());
    assertEquals(1, server.totalEffects());
    assertEquals("/orders", server.recordedRequests().get(0).path());
  }

  @Test
  void anEnqueuedRequestIsJournaledWithoutTheFragment() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = f.idem();
    OperationId id = idem.enqueue("create-order", Fixture.untaggedPost(withFragment(server)));
    OperationRecord rec = f.journal.find(id).orElseThrow();
    assertNull(rec.request().uri().getRawFragment(), rec.request().uri().toString());
    assertFalse(rec.request().uri().toString().contains("qzPLANT"), rec.request().uri().toString());
  }
}
