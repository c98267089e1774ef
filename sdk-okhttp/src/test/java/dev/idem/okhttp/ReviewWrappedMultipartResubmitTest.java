package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import okhttp3.MediaType;
import okhttp3.MultipartBody;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Review (round2c): the content-derived boundary (b69c1496) only reaches a request body that IS a
 * MultipartBody. The same upload built again for the same forReference operation is still refused
 * as a reused key (IdempotencyKeyReusedException, the original f06921c4 symptom) when the multipart
 * is wrapped (the usual upload-progress RequestBody around it, e.g. for Retrofit/Android progress
 * bars) or nested (a multipart/mixed part inside form-data keeps its random boundary, which is
 * hashed into the outer one).
 */
class ReviewWrappedMultipartResubmitTest {
  static final byte[] SECRET = "okhttp-test-secret-0123456789".getBytes(StandardCharsets.UTF_8);

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  static MultipartBody evidence() {
    return new MultipartBody.Builder().setType(MultipartBody.FORM)
        .addFormDataPart("purpose", "dispute_evidence")
        .addFormDataPart("file", "receipt.txt", RequestBody.create("paid in full", MediaType.get("text/plain")))
        .build();
  }

  /** The common upload-progress wrapper: same type, length and bytes, counting what is written. */
  static RequestBody withProgress(RequestBody delegate) {
    return new RequestBody() {
      @Override
      public MediaType contentType() {
        return delegate.contentType();
      }

      @Override
      public long contentLength() throws IOException {
        return delegate.contentLength();
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        delegate.writeTo(sink);
      }
    };
  }

  static MultipartBody nested() {
    MultipartBody files = new MultipartBody.Builder().setType(MultipartBody.MIXED)
        .addPart(RequestBody.create("page 1", MediaType.get("text/plain")))
        .addPart(RequestBody.create("page 2", MediaType.get("text/plain")))
        .build();
    return new MultipartBody.Builder().setType(MultipartBody.FORM)
        .addFormDataPart("purpose", "dispute_evidence")
        .addFormDataPart("files", null, files)
        .build();
  }

  private Request upload(RequestBody body) {
    return new Request.Builder().url(server.url("/files").toString()).post(body)
        .tag(IdempotentOperation.class, IdempotentOperation.forReference("upload", "dispute-42")).build();
  }

  private void sameUploadTwice(Supplier<RequestBody> build) throws IOException {
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().referenceKeySecret(SECRET).build()).build();
    try (Response r = Fixture.client(idem).newCall(upload(build.get())).execute()) {
      assertEquals(201, r.code());
    }
    // The same upload, built again (a job re-processing the item): answered from the journal.
    try (Response r = Fixture.client(idem).newCall(upload(build.get())).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(1, server.totalEffects());
  }

  @Test
  void aWrappedMultipartUploadBuiltAgainIsAnsweredNotRefused() throws Exception {
    sameUploadTwice(() -> withProgress(evidence()));
  }

  @Test
  void aNestedMultipartUploadBuiltAgainIsAnsweredNotRefused() throws Exception {
    sameUploadTwice(ReviewWrappedMultipartResubmitTest::nested);
  }

  @Test
  void control_thePlainMultipartUploadBuiltAgainIsAnswered() throws Exception {
    sameUploadTwice(ReviewWrappedMultipartResubmitTest::evidence);
  }
}
