package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.BodySubscriber;
import java.net.http.HttpResponse.BodySubscribers;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A body handler whose subscriber throws while it reads the body (a parser that fails on bad
 * input). java.net.http fails the sendAsync future with that exception; Idem's sendAsync must
 * complete too, not hang.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class ThrowingSubscriberTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  /** Delegates to ofString, but its onNext throws, as a strict parser would. */
  static BodyHandler<String> throwingOnNext() {
    return info -> new BodySubscriber<String>() {
      final BodySubscriber<String> inner = BodySubscribers.ofString(java.nio.charset.StandardCharsets.UTF_8);

      @Override
      public CompletionStage<String> getBody() {
        return inner.getBody();
      }

      @Override
      public void onSubscribe(Flow.Subscription s) {
        inner.onSubscribe(s);
      }

      @Override
      public void onNext(List<ByteBuffer> item) {
        throw new IllegalStateException("parser rejected the body");
      }

      @Override
      public void onError(Throwable t) {
        inner.onError(t);
      }

      @Override
      public void onComplete() {
        inner.onComplete();
      }
    };
  }

  @Test
  void idemsFutureFailsAsTheJdkClientsDoesInsteadOfHanging() throws Exception {
    IdempotentServer server = serverExtension.server();
    // The wrapped client itself: the future fails, it does not hang.
    CompletableFuture<HttpResponse<String>> plain =
        Fixture.JDK.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), throwingOnNext());
    ExecutionException jdk = assertThrows(ExecutionException.class, () -> plain.get(5, TimeUnit.SECONDS));
    assertTrue(jdk.getCause() instanceof IllegalStateException, jdk.toString());

    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order");
    CompletableFuture<IdempotentHttpResponse<String>> idem =
        call.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-2\"}"), throwingOnNext());
    try {
      idem.get(5, TimeUnit.SECONDS);
    } catch (ExecutionException expected) {
      return; // completed (exceptionally), as the JDK's does: fine
    } catch (TimeoutException hung) {
      throw new AssertionError("Idem's sendAsync future never completed, although the journal says "
          + f.record(call.operationId()).state(), hung);
    }
  }
}
