package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.RequestBody;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import retrofit2.Call;
import retrofit2.Callback;
import retrofit2.Response;
import retrofit2.Retrofit;
import retrofit2.http.Body;
import retrofit2.http.POST;
import retrofit2.http.Tag;

/** Retrofit with {@code callFactory(idem.callFactory(client))}: enqueue waits out backoff on the scheduler. */
class RetrofitCallFactoryTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  interface Orders {
    @POST("orders")
    Call<ResponseBody> create(@Body RequestBody order, @Tag IdempotentOperation op);
  }

  @Test
  void anEnqueuedRetrofitCallRetriesWithOneKeyWithoutAThreadInBackoff() throws Exception {
    IdempotentServer server = serverExtension.server();
    server.plan().next(Fault.status(503));
    CountDownLatch retryScheduled = new CountDownLatch(1);
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder()
        .scheduler(CallFactoryTest.scheduledOn(f, retryScheduled)).build()).build();
    OkHttpClient client = Fixture.client(idem);
    Orders orders = new Retrofit.Builder().baseUrl(server.url("/").toString())
        .callFactory(idem.callFactory(client)).build().create(Orders.class);
    IdempotentOperation op = IdempotentOperation.of("create-order");

    CompletableFuture<String> body = new CompletableFuture<>();
    orders.create(RequestBody.create(Fixture.ORDER, Fixture.JSON), op).enqueue(new Callback<ResponseBody>() {
      @Override
      public void onResponse(Call<ResponseBody> call, Response<ResponseBody> response) {
        try (ResponseBody b = response.body()) {
          body.complete(response.code() + " " + b.string());
        } catch (Exception e) {
          body.completeExceptionally(e);
        }
      }

      @Override
      public void onFailure(Call<ResponseBody> call, Throwable t) {
        body.completeExceptionally(t);
      }
    });
    assertTrue(retryScheduled.await(10, TimeUnit.SECONDS));
    assertFalse(body.isDone());

    f.time.advance(Duration.ofSeconds(1));
    String answer = body.get(10, TimeUnit.SECONDS);
    assertTrue(answer.startsWith("201 ") && answer.contains(op.key().value()), answer);
    Fixture.assertKeyOnEveryRequest(server, op.key().value(), 2);
    assertEquals(1, server.effectCount(op.key().value()));
  }
}
