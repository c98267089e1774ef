package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.ReceivedRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import okhttp3.MediaType;
import okhttp3.MultipartBody;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The boundary the adapter gives a multipart body: the same upload, built again (with OkHttp's
 * random boundary each time), is sent and journaled as the same bytes under the same
 * Content-Type, so a re-submission after a crash goes out with the key, byte for byte as the
 * first attempt, and the server replays its stored answer.
 */
class MultipartBoundaryTest {
  static final byte[] SECRET = "okhttp-test-secret-0123456789".getBytes(StandardCharsets.UTF_8);

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  private Request upload(String purpose) {
    RequestBody evidence = new MultipartBody.Builder().setType(MultipartBody.FORM)
        .addFormDataPart("purpose", purpose)
        .addFormDataPart("file", "receipt.txt", RequestBody.create("paid in full", MediaType.get("text/plain")))
        .build();
    return new Request.Builder().url(server.url("/files").toString()).post(evidence)
        .tag(IdempotentOperation.class, IdempotentOperation.forReference("upload", "dispute-42")).build();
  }

  @Test
  void aResubmissionAfterACrashSendsTheSameBytesWithTheSameKey() throws Exception {
    IdempotentExecutor dying = f.executorBuilder().referenceKeySecret(SECRET).sleeper(d -> {
      throw new InterruptedException("process is going down");
    }).build();
    server.plan().next(Fault.commitThenDropResponse());
    assertThrows(OperationPendingException.class,
        () -> Fixture.client(IdemOkHttp.builder(dying).build()).newCall(upload("dispute_evidence")).execute());
    Thread.interrupted();

    IdemOkHttp restarted = IdemOkHttp.builder(f.executorBuilder().referenceKeySecret(SECRET).build()).build();
    try (Response r = Fixture.client(restarted).newCall(upload("dispute_evidence")).execute()) {
      assertEquals(201, r.code());
      assertTrue(IdempotencyResult.of(r).orElseThrow().replayed(), "the server's stored answer");
    }
    List<ReceivedRequest> received = server.recordedRequests();
    assertEquals(2, received.size());
    assertEquals(received.get(0).keyHeader(), received.get(1).keyHeader());
    assertTrue(received.get(0).keyHeader().isPresent());
    assertEquals(received.get(0).body(), received.get(1).body(), "the same bytes on the wire");
    String type = received.get(0).header("content-type").orElseThrow();
    assertEquals(type, received.get(1).header("content-type").orElseThrow());
    String boundary = MediaType.get(type).parameter("boundary");
    assertTrue(received.get(0).body().startsWith("--" + boundary + "\r\n"), received.get(0).body());
    assertEquals(1, server.totalEffects());

    List<OperationRecord> records = f.allRecords();
    assertEquals(1, records.size());
    assertEquals(OperationState.SUCCEEDED, records.get(0).state());
    assertEquals(type, records.get(0).request().contentType().orElseThrow(), "the journaled Content-Type");
    assertEquals(received.get(0).body(), new String(records.get(0).request().body(), StandardCharsets.UTF_8));
  }

  @Test
  void anotherPayloadForTheSameReferenceIsStillRefused() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().referenceKeySecret(SECRET).build()).build();
    Fixture.client(idem).newCall(upload("dispute_evidence")).execute().close();
    assertThrows(dev.idem.core.IdempotencyKeyReusedException.class,
        () -> Fixture.client(idem).newCall(upload("something_else")).execute().close());
    assertEquals(1, server.requestCount());
  }
}
