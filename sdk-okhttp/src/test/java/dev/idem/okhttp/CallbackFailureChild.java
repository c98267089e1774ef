package dev.idem.okhttp;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import java.io.IOException;
import java.net.URI;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Response;

/**
 * Run in a child JVM by {@link CallbackFailureLoggedTest}, whose SLF4J (slf4j-simple at WARN) writes
 * to the output the test reads: one keyed POST through {@link IdemOkHttp#callFactory}, with an
 * Authorization header, whose {@code onResponse} throws an IOException. Prints {@code done} once the
 * dispatcher has finished with the callback.
 */
public final class CallbackFailureChild {
  static final String TOKEN = "Bearer child-secret-token";
  static final String MESSAGE = "the app's callback broke";

  private CallbackFailureChild() {}

  public static void main(String[] args) throws Exception {
    URI url = URI.create(args[0]);
    IdemOkHttp idem = IdemOkHttp.builder(IdempotentExecutor.builder().journal(new InMemoryJournal()).build()).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();
    CountDownLatch called = new CountDownLatch(1);
    idem.callFactory(client).newCall(Fixture.order(url, IdempotentOperation.of("create-order")).newBuilder()
        .header("Authorization", TOKEN).build()).enqueue(new Callback() {
          @Override
          public void onFailure(Call call, IOException e) {
            System.out.println("onFailure " + e);
            called.countDown();
          }

          @Override
          public void onResponse(Call call, Response response) throws IOException {
            called.countDown();
            throw new IOException(MESSAGE);
          }
        });
    if (!called.await(60, TimeUnit.SECONDS)) {
      throw new AssertionError("no callback");
    }
    ExecutorService dispatcher = client.dispatcher().executorService();
    dispatcher.shutdown();
    if (!dispatcher.awaitTermination(60, TimeUnit.SECONDS)) {
      throw new AssertionError("the dispatcher did not finish");
    }
    idem.close();
    System.out.println("done");
    System.out.flush();
    System.exit(0);
  }
}
