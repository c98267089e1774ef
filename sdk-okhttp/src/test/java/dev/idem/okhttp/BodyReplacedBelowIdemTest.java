package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An interceptor below Idem that wraps the request body (signing, gzip: OkHttp's own
 * GzipRequestInterceptor recipe) drops the one-shot marker by which the interceptor alone keeps
 * OkHttp from re-sending a keyed attempt. With {@link IdemOkHttp#install}, its network interceptor
 * still stops the 307. With the interceptor alone, OkHttp re-POSTs the 307 to its Location (another
 * host) before Idem can stop it: the follow-up's answer is then not taken as the attempt's, and the
 * attempt is ambiguous. Before: the other host's 201 was journaled as the answer of the attempt
 * to the first, and the operation ended SUCCEEDED.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class BodyReplacedBelowIdemTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  /** Signs the request, replacing its body with one that writes the same bytes. */
  static final Interceptor SIGNING = chain -> {
    Request r = chain.request();
    RequestBody original = r.body();
    if (original == null) {
      return chain.proceed(r);
    }
    RequestBody wrapped = new RequestBody() {
      @Override
      public MediaType contentType() {
        return original.contentType();
      }

      @Override
      public long contentLength() throws IOException {
        return original.contentLength();
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        original.writeTo(sink);
      }
    };
    return chain.proceed(r.newBuilder().header("X-Signature", "sig").method(r.method(), wrapped).build());
  };

  @Test
  void withInstallA307IsNotFollowedToAnotherHost() throws Exception {
    IdempotentServer server = serverExtension.server();
    try (IdempotentServer other = IdempotentServer.start()) {
      IdemOkHttp idem = f.idem();
      OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(SIGNING).build();
      server.plan().next(Fault.redirect(307, other.url("/elsewhere").toString()));
      IdempotentOperation op = IdempotentOperation.of("create-order");
      try (Response r = client.newCall(order(server.url("/orders"), op)).execute()) {
        assertEquals(307, r.code());
      }
      assertEquals(0, other.requestCount(), "the keyed POST went to the redirect's host");
      assertEquals(OperationState.FAILED, f.record(op).state());
    }
  }

  @Test
  void withTheInterceptorAloneAFollowUpOkHttpSentIsNotTakenAsTheAttemptsAnswer() throws Exception {
    IdempotentServer server = serverExtension.server();
    try (IdempotentServer other = IdempotentServer.start()) {
      IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder()
          .retryPolicy(RetryPolicy.builder().maxAttempts(2).build()).build()).build();
      OkHttpClient client = new OkHttpClient.Builder().addInterceptor(idem.interceptor()).addInterceptor(SIGNING)
          .build();
      server.plan().next(Fault.redirect(307, other.url("/elsewhere").toString()));
      server.plan().next(Fault.redirect(307, other.url("/elsewhere").toString()));
      IdempotentOperation op = IdempotentOperation.of("create-order");
      assertThrows(OperationUncertainException.class,
          () -> client.newCall(order(server.url("/orders"), op)).execute().close());
      OperationRecord rec = f.record(op);
      assertEquals(OperationState.UNCERTAIN, rec.state(), "the other host may have acted on it");
      for (AttemptRecord a : rec.attempts()) {
        assertEquals(Classification.AMBIGUOUS, a.classification(), a.toString());
      }
    }
  }
}
