package dev.idem.httpclient;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A body that can be read once, like a network stream: the first subscriber gets the bytes,
 * every later one gets an error.
 */
final class OneShotPublisher implements Flow.Publisher<ByteBuffer> {
  private final byte[] bytes;
  private final AtomicInteger subscriptions = new AtomicInteger();

  OneShotPublisher(String text) {
    this.bytes = text.getBytes(StandardCharsets.UTF_8);
  }

  int subscriptions() {
    return subscriptions.get();
  }

  /** Marks it consumed, as if something had read it already. */
  void consume() {
    subscriptions.incrementAndGet();
  }

  @Override
  public void subscribe(Flow.Subscriber<? super ByteBuffer> s) {
    boolean first = subscriptions.incrementAndGet() == 1;
    s.onSubscribe(new Flow.Subscription() {
      private boolean done;

      @Override
      public void request(long n) {
        if (done) {
          return;
        }
        done = true;
        if (!first) {
          s.onError(new IllegalStateException("this stream was already consumed"));
          return;
        }
        s.onNext(ByteBuffer.wrap(bytes));
        s.onComplete();
      }

      @Override
      public void cancel() {
        done = true;
      }
    });
  }
}
