package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.ReceivedRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Regression test (review of 2026-12-08): a resumed snapshot went out without its body's media type.
 *
 * A journaled operation whose body's media type is kept as the snapshot's
 * {@link RequestSnapshot#contentType()} and not as a {@code Content-Type} header, which is how the
 * OkHttp adapter journals every request (OkHttp keeps the type on the {@code RequestBody}, not in
 * the request's headers) and how an app journals one through the core API
 * ({@code RequestSnapshot.builder(...).body(bytes, "application/json")} then
 * {@code executor.enqueue}). The app delivers it with {@code client.resumeTransport()}, whose
 * Javadoc says each attempt is "the journaled snapshot ... plus the key header".
 *
 * <p>Expected: the resumed POST carries {@code Content-Type: application/json}, as the OkHttp
 * adapter's own transport sends it ({@code OkHttpSnapshots} rebuilds the body with
 * {@code snapshot.contentType()}). Before the fix, {@code ResumeTransport.build} copies only
 * {@code request.headers()} and never reads {@code request.contentType()}, so the JSON body goes
 * out with no Content-Type at all (the JDK adds none): a server that dispatches on the media type
 * answers 415, or reads the body as something else, and the operation is delivered wrong or ends
 * FAILED.
 */
class ResumeKeepsContentTypeTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  void aResumedSnapshotKeepsItsBodysMediaType() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    RequestSnapshot snapshot = RequestSnapshot.builder("POST", server.url("/orders"))
        .body("{\"sku\":\"A-1\"}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
    OperationId id = f.executor.enqueue(Operation.builder("create-order", snapshot).build()).id();

    Outcome outcome = f.await(f.executor.resumeAsync(id, f.client.resumeTransport()));

    assertEquals(201, outcome.response().status());
    assertEquals(OperationState.SUCCEEDED, f.record(id).state());
    List<ReceivedRequest> got = server.recordedRequests();
    assertEquals(1, got.size(), "one delivery");
    assertEquals(Optional.of(id.key().value()), got.get(0).keyHeader(), "the delivery carries the key");
    assertEquals(Optional.of("application/json"), got.get(0).header("Content-Type"),
        "the journaled body's media type goes out with it");
  }
}
