package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.core.OperationRecord;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A URI fragment ({@code #access_token=...}) never goes on the wire, but the decorator's snapshot
 * of the request carried it into the journal in clear, and the response's text quoted it (with
 * the query). The journal keeps the URI without it; the text names the request without either.
 */
class FragmentNotJournaledTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @ParameterizedTest
  @EnumSource(Mode.class)
  void theJournalAndTheResponseTextLeaveTheFragmentOut(Mode mode) throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    HttpRequest request = Fixture.post(
        URI.create(server.url("/orders") + "?currency=EUR#access_token=qzPLANTfragment"), "{\"qty\":1}");
    OperationCall call = f.client.operation("create-order");
    IdempotentHttpResponse<String> response = mode.send(f, call, request, BodyHandlers.ofString());
    assertEquals(201, response.statusCode());
    OperationRecord rec = f.record(response.operationId());
    assertNull(rec.request().uri().getRawFragment(), rec.request().uri().toString());
    assertEquals("currency=EUR", rec.request().uri().getRawQuery());
    assertFalse(response.toString().contains("qzPLANT"), response.toString());
    assertEquals(1, server.totalEffects());
    assertEquals("/orders", server.recordedRequests().get(0).path());
  }
}
