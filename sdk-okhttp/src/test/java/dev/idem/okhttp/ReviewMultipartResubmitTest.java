package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.nio.charset.StandardCharsets;
import okhttp3.MediaType;
import okhttp3.MultipartBody;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Review: a multipart upload (dispute evidence, a KYC document) keyed by its business reference.
 * docs/client.md: "A second submission of the same reference is answered from the journal". A
 * restartable batch job rebuilds the request for each item it (re)processes; OkHttp's
 * {@code MultipartBody.Builder} picks a random boundary per body, so the journaled bytes differ
 * from the re-built ones in the boundary only, and Idem's raw-byte fingerprint refuses the second
 * submission as a reused key instead of answering it from the journal.
 */
class ReviewMultipartResubmitTest {
  static final byte[] SECRET = "okhttp-test-secret-0123456789".getBytes(StandardCharsets.UTF_8);

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  /** What the batch job builds for one item, each time it processes it. */
  private Request upload(IdempotentOperation op) {
    RequestBody evidence = new MultipartBody.Builder().setType(MultipartBody.FORM)
        .addFormDataPart("purpose", "dispute_evidence")
        .addFormDataPart("file", "receipt.txt",
            RequestBody.create("paid in full", MediaType.get("text/plain")))
        .build();
    return new Request.Builder().url(server.url("/files").toString()).post(evidence)
        .tag(IdempotentOperation.class, op).build();
  }

  @Test
  void resubmittingTheSameMultipartUploadForTheSameReferenceIsAnsweredFromTheJournal() throws Exception {
    OkHttpClient client = Fixture.client(
        IdemOkHttp.builder(f.executorBuilder().referenceKeySecret(SECRET).build()).build());
    try (Response first = client.newCall(upload(IdempotentOperation.forReference("upload", "dispute-42"))).execute()) {
      assertEquals(201, first.code());
    }
    // The job is run again (or the item re-processed): same reference, same file, same fields.
    try (Response second = client.newCall(upload(IdempotentOperation.forReference("upload", "dispute-42"))).execute()) {
      assertEquals(201, second.code(), "the same upload, answered from the journal");
      assertEquals(true, IdempotencyResult.of(second).orElseThrow().fromJournal());
    }
    assertEquals(1, server.requestCount());
  }
}
