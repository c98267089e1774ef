package dev.idem.okhttp.internal;

import dev.idem.core.spi.ResponseSnapshot;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Response;

/** An enqueued OkHttp call as the future an {@link dev.idem.core.spi.AsyncTransport} returns. */
final class CallFutures {
  private CallFutures() {}

  /** Turns a live response into the attempt's snapshot, on OkHttp's callback thread. */
  @FunctionalInterface
  interface Capture {
    ResponseSnapshot apply(Response response) throws IOException;
  }

  /**
   * Enqueues {@code call}; the future completes with what {@code capture} makes of the response, or
   * with the call's failure. Cancelling the future (the executor does so when its own future is
   * cancelled) cancels the call.
   */
  static CompletableFuture<ResponseSnapshot> enqueue(Call call, Capture capture) {
    CompletableFuture<ResponseSnapshot> result = new CompletableFuture<>();
    result.whenComplete((r, e) -> {
      if (result.isCancelled()) {
        call.cancel();
      }
    });
    call.enqueue(new Callback() {
      @Override
      public void onFailure(Call c, IOException e) {
        result.completeExceptionally(e);
      }

      @Override
      public void onResponse(Call c, Response response) {
        try {
          result.complete(capture.apply(response));
        } catch (IOException | RuntimeException e) {
          // The capture could not make a snapshot; the response is closed. (A body that breaks off
          // after the headers does not get here: the attempt is answered, see ResponseCapture.)
          response.close();
          result.completeExceptionally(e);
        }
      }
    });
    return result;
  }
}
