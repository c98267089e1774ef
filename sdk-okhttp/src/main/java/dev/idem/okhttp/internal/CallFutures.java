package dev.idem.okhttp.internal;

import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.ResponseSnapshot;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.RequestBody;
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
    RequestBody body = call.request().body();
    FollowUps.AttemptBody attemptBody = body instanceof FollowUps.AttemptBody b ? b : null;
    CompletableFuture<ResponseSnapshot> result = new CompletableFuture<>() {
      /**
       * The executor cancels an attempt when its timeout fires. One still waiting in OkHttp's
       * dispatcher queue (the host's connection slots taken) has written nothing: it ends as not
       * sent, so that it is not recorded as an attempt that may have taken effect. That verdict is
       * the body's refusal, atomic with its write (see FollowUps.AttemptBody): once refused, the
       * call can no longer send it, however the dispatcher races with this cancel; if writing won,
       * this is an ordinary cancel of an attempt that may have been sent. A bodyless request has
       * no write to refuse (its headers may be all there is), so its cancel is always the ordinary
       * one; so is that of a request with Expect: 100-continue, whose body is never refused (its
       * head may go out and be acted on first), even while it waits in the queue: nothing here
       * proves the call has not started.
       */
      @Override
      public boolean cancel(boolean mayInterruptIfRunning) {
        if (attemptBody != null && !isDone() && attemptBody.refuse()) {
          // Before completing: what depends on this future runs now, on this thread, and the
          // call must be stopped first (it could not send the body anyway).
          call.cancel();
          if (completeExceptionally(new RequestNotSentException("cancelled (its attempt timeout, say) before its"
              + " request body was written; it waited for a connection or a dispatcher slot", null))) {
            return true;
          }
        }
        return super.cancel(mayInterruptIfRunning);
      }
    };
    result.whenComplete((r, e) -> {
      if (result.isCancelled()) {
        call.cancel();
      }
    });
    call.enqueue(new Callback() {
      @Override
      public void onFailure(Call c, IOException e) {
        // Past Idem's interceptor FollowUps has decided; this catches an interceptor above it
        // (added before install) that failed before proceeding: nothing was written. A call the
        // executor cancelled has its future done already; OkHttp also cancels the call when an
        // interceptor throws a RuntimeException, so being canceled says nothing here.
        RequestNotSentException notSent = e instanceof RequestNotSentException ? null
            : e.getCause() instanceof RejectedExecutionException refused
                // The dispatcher's executor refused the call (the app shut its client down after
                // this attempt's own check): nothing was written, and the call stops PENDING.
                ? LiveCallTransport.stoppedBeforeSend("the OkHttp client's dispatcher refused the call", refused)
                : FollowUps.notSent(attemptBody, e);
        result.completeExceptionally(notSent != null ? notSent : e);
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
