package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An app interceptor that retries a 5xx itself, added before install (so above Idem). Through the
 * interceptor ({@code execute}) it wraps the whole operation, and its second proceed is answered
 * from the journal. Through the call factory's {@code enqueue}, each attempt is its own OkHttp call
 * through the app's interceptors: the app's second proceed of one attempt is refused before the
 * network, so every request on the wire with the key is still a journaled attempt. Before: the
 * app's retry re-sent the attempt, a request the journal did not have.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class AppRetryAboveIdemTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void everyRequestOnTheWireIsAJournaledAttemptThroughTheCallFactoryToo(boolean viaCallFactory) throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = f.idem();
    OkHttpClient.Builder b = new OkHttpClient.Builder().addInterceptor(chain -> {
      Response first = chain.proceed(chain.request());
      if (first.code() < 500) {
        return first;
      }
      first.close();
      return chain.proceed(chain.request());  // the app's own "retry once on 5xx"
    });
    OkHttpClient client = idem.install(b).build();
    server.plan().next(Fault.status(503));

    IdempotentOperation op = IdempotentOperation.of("create-order");
    CompletableFuture<Integer> code = new CompletableFuture<>();
    if (!viaCallFactory) {
      try (Response r = client.newCall(order(server.url("/orders"), op)).execute()) {
        code.complete(r.code());
      }
    } else {
      idem.callFactory(client).newCall(order(server.url("/orders"), op)).enqueue(new Callback() {
        @Override
        public void onFailure(Call call, IOException e) {
          code.completeExceptionally(e);
        }

        @Override
        public void onResponse(Call call, Response response) {
          try (response) {
            code.complete(response.code());
          }
        }
      });
      // The refused re-send fails the first attempt; the second is due after a backoff.
      for (int i = 0; i < 100 && !code.isDone(); i++) {
        f.time.advance(java.time.Duration.ofSeconds(1));
        Thread.sleep(20);
      }
    }
    assertEquals(201, code.get(10, TimeUnit.SECONDS));
    long onTheWire = server.recordedRequests().stream()
        .filter(r -> r.keyHeader().equals(Optional.of(op.key().value()))).count();
    assertEquals(onTheWire, f.record(op).attempts().size(),
        "requests on the wire with the key = attempts in the journal");
  }
}
