package dev.idem.okhttp.contract;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Transport;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotencyResult;
import dev.idem.okhttp.IdempotentOperation;
import dev.idem.testkit.contract.AdapterContract;
import dev.idem.testkit.contract.AdapterDriver;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import retrofit2.Retrofit;
import retrofit2.http.Body;
import retrofit2.http.HeaderMap;
import retrofit2.http.POST;
import retrofit2.http.Tag;
import retrofit2.http.Url;

/** The OkHttp adapter, set up with {@link IdemOkHttp#install}, called in one of three styles. */
final class OkHttpDriver implements AdapterDriver {
  static final MediaType JSON = MediaType.get("application/json");

  enum Style { EXECUTE, ENQUEUE, CALL_FACTORY, RETROFIT }

  /** A Retrofit service: the operation rides as a {@code @Tag}; null means untagged. */
  interface Orders {
    @POST
    retrofit2.Call<ResponseBody> post(@Url String url, @Body RequestBody body, @Tag IdempotentOperation op,
        @HeaderMap Map<String, String> headers);
  }

  private final Style style;

  OkHttpDriver(Style style) {
    this.style = style;
  }

  @Override
  public Session open(Setup setup) {
    IdemOkHttp idem = IdemOkHttp.builder(setup.executor()).headerName(setup.keyHeader()).keyFormat(setup.format())
        .untaggedPolicy(setup.untagged()).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();
    return new Session() {
      @Override
      public Reply send(AdapterDriver.Call call) throws Exception {
        IdempotentOperation op = operation(call);
        if (style == Style.RETROFIT) {
          Orders orders = new Retrofit.Builder().baseUrl(call.url().resolve("/").toString()).client(client).build()
              .create(Orders.class);
          retrofit2.Response<ResponseBody> r = orders.post(call.url().toString(),
              RequestBody.create(call.json(), JSON), op, call.headers()).execute();
          ResponseBody body = r.isSuccessful() ? r.body() : r.errorBody();
          return reply(r.code(), body == null ? "" : body.string(), r.raw());
        }
        Request request = request(call, op);
        if (style == Style.EXECUTE) {
          try (Response r = client.newCall(request).execute()) {
            return reply(r.code(), r.body().string(), r);
          }
        }
        CompletableFuture<Reply> done = new CompletableFuture<>();
        okhttp3.Call.Factory calls = style == Style.CALL_FACTORY ? idem.callFactory(client) : client;
        calls.newCall(request).enqueue(new Callback() {
          @Override
          public void onFailure(okhttp3.Call c, IOException e) {
            done.completeExceptionally(e);
          }

          @Override
          public void onResponse(okhttp3.Call c, Response r) {
            try (r) {
              done.complete(reply(r.code(), r.body().string(), r));
            } catch (IOException | RuntimeException e) {
              done.completeExceptionally(e);
            }
          }
        });
        return AdapterContract.await(setup.time(), done);
      }

      @Override
      public OperationId enqueue(AdapterDriver.Call call) throws Exception {
        IdempotentOperation op = operation(call);
        return op == null ? idem.enqueue(call.operation(), request(call, null)) : idem.enqueue(request(call, op));
      }

      @Override
      public Transport resumeTransport() {
        return idem.transport(client);
      }
    };
  }

  private static IdempotentOperation operation(AdapterDriver.Call call) {
    if (call.operation() == null) {
      return null;
    }
    IdempotentOperation op = IdempotentOperation.of(call.operation());
    return call.key() == null ? op : op.withKey(call.key());
  }

  private static Request request(AdapterDriver.Call call, IdempotentOperation op) {
    Request.Builder b = new Request.Builder().url(call.url().toString()).post(RequestBody.create(call.json(), JSON));
    call.headers().forEach(b::header);
    if (op != null) {
      b.tag(IdempotentOperation.class, op);
    }
    return b.build();
  }

  private static Reply reply(int status, String body, Response raw) {
    Optional<IdempotencyResult> result = IdempotencyResult.of(raw);
    return new Reply(status, body, result.map(IdempotencyResult::operationId),
        result.map(IdempotencyResult::state), result.map(IdempotencyResult::replayed).orElse(false),
        raw.headers().toMultimap());
  }
}
