package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.ReceivedRequest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import okhttp3.MediaType;
import okhttp3.MultipartBody;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import okio.Okio;
import okio.Source;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Review (round2c): the content-derived multipart boundary writes every part once for the hash
 * and then once more for the journaled bytes. A part backed by an InputStream (the usual upload
 * from a ContentResolver / a stream, as a custom RequestBody that does not override isOneShot) is
 * drained by the hash, so the journaled and sent part is EMPTY, and the upload SUCCEEDS with an
 * empty file. Before b69c1496 the body was read exactly once and the same upload arrived intact
 * (as it still does when the same stream body is the request's whole body).
 */
class ReviewMultipartStreamPartTest {
  static final String FILE = "paid in full, receipt #42";

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  /** The common "stream as a RequestBody" helper: length unknown, written from the stream once. */
  static RequestBody streamBody(InputStream in, MediaType type) {
    return new RequestBody() {
      @Override
      public MediaType contentType() {
        return type;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        Source source = Okio.source(in);
        sink.writeAll(source);
      }
    };
  }

  @Test
  void aStreamBackedPartIsSentWithItsContent() throws Exception {
    RequestBody file = streamBody(new ByteArrayInputStream(FILE.getBytes(StandardCharsets.UTF_8)),
        MediaType.get("text/plain"));
    RequestBody upload = new MultipartBody.Builder().setType(MultipartBody.FORM)
        .addFormDataPart("purpose", "dispute_evidence")
        .addFormDataPart("file", "receipt.txt", file)
        .build();
    IdempotentOperation op = IdempotentOperation.of("upload");
    Request request = new Request.Builder().url(server.url("/files").toString()).post(upload)
        .tag(IdempotentOperation.class, op).build();

    try (Response r = Fixture.client(f.idem()).newCall(request).execute()) {
      assertEquals(201, r.code());
    }
    List<ReceivedRequest> received = server.recordedRequests();
    assertEquals(1, received.size());
    OperationRecord rec = f.record(op);
    assertEquals(OperationState.SUCCEEDED, rec.state());
    String journaled = new String(rec.request().body(), StandardCharsets.UTF_8);
    assertTrue(journaled.contains(FILE), "the journaled upload carries the file: " + journaled);
    assertTrue(received.get(0).body().contains(FILE), "the server got the file: " + received.get(0).body());
  }
}
