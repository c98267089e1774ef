package dev.idem.examples.samples;

import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import dev.idem.testkit.IdempotentServer;
import java.nio.file.Files;
import java.nio.file.Path;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.RequestBody;
import okhttp3.ResponseBody;
import retrofit2.Call;
import retrofit2.Response;
import retrofit2.Retrofit;
import retrofit2.http.Body;
import retrofit2.http.POST;
import retrofit2.http.Tag;

/**
 * Retrofit, unchanged but for one {@code @Tag} parameter: the OkHttp interceptor turns every tagged
 * call into one journaled operation, retried with the same key.
 */
public final class RetrofitSample {
  /** The app's Retrofit service: the {@code @Tag} names the logical operation. */
  public interface Orders {
    @POST("orders")
    Call<ResponseBody> create(@Body RequestBody order, @Tag IdempotentOperation operation);
  }

  private RetrofitSample() {}

  /**
   * The app's OkHttp client, as in the README's quickstart: {@code install} adds Idem's interceptor
   * and turns off OkHttp's own {@code retryOnConnectionFailure}, which would repeat requests below
   * Idem where the journal cannot count them. The interceptor that adds Authorization comes after
   * it, so that it runs on every attempt and its header never reaches the journal.
   *
   * @param idem the adapter
   * @return the client to build Retrofit on
   */
  public static OkHttpClient client(IdemOkHttp idem) {
    return idem.install(new OkHttpClient.Builder())
        .addInterceptor(chain -> chain.proceed(chain.request().newBuilder()
            .header("Authorization", "Bearer from-your-token-store").build()))
        .build();
  }

  /** Creates one order through Retrofit and returns the server's body. */
  public static String run(IdempotentServer server, Path journalDir) throws Exception {
    // The adapter closes the executor it made; the journal, closed after it, stays the app's.
    try (JdbcJournal journal = JdbcJournal.openEmbedded(journalDir);
        IdemOkHttp idem = IdemOkHttp.create(journal)) {
      OkHttpClient client = client(idem);
      Orders orders = new Retrofit.Builder().baseUrl(server.url("/").toString()).client(client).build()
          .create(Orders.class);

      IdempotentOperation op = IdempotentOperation.of("create-order").withReference("cart-42");
      Response<ResponseBody> response = orders.create(
          RequestBody.create("{\"cart\":\"cart-42\",\"amount\":1200}", MediaType.get("application/json")), op)
          .execute();
      try (ResponseBody body = response.body()) {
        return body == null ? "" : body.string();
      }
    }
  }

  public static void main(String[] args) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      System.out.println(run(server, Files.createTempDirectory("idem-retrofit-")));
    }
  }
}
