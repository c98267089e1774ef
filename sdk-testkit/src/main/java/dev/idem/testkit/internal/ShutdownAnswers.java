package dev.idem.testkit.internal;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import mockwebserver3.MockResponse;
import mockwebserver3.MockResponseBody;
import okio.BufferedSink;

/**
 * The answers that closing the server owes: requests held by a slow-processing fault, which
 * close() wakes to answer 503, are counted here until that answer is on the wire, so that
 * close() can wait for them before MockWebServer cuts the connections. Without the wait the woken
 * request's client gets its connection cut after sending the whole request: an ambiguous "maybe
 * processed" instead of the promised 503.
 *
 * <p>Thread-safe.
 */
final class ShutdownAnswers {
  private final Object lock = new Object();
  private int held;

  /** One request's place in the count; released once, however many times it is asked to. */
  final class Hold {
    private final AtomicBoolean released = new AtomicBoolean();
    private volatile boolean handedOver;

    /** The request will not answer because of the close (it runs its handler, or is done): not waited for. */
    void release() {
      if (released.compareAndSet(false, true)) {
        synchronized (lock) {
          held--;
          lock.notifyAll();
        }
      }
    }

    /** The request's dispatch is over: released now unless its answer took the hold over. */
    void dispatched() {
      if (!handedOver) {
        release();
      }
    }

    /**
     * {@code response}, whose body releases this hold once written and flushed to the socket
     * (or once writing it failed). One without a body is released now: MockWebServer writes it
     * whole before it could call anything of ours.
     */
    MockResponse.Builder releasedOnceWritten(MockResponse.Builder response) {
      handedOver = true;
      MockResponseBody body = response.getBody();
      if (body == null) {
        release();
        return response;
      }
      return response.body(new MockResponseBody() {
        @Override
        public long getContentLength() {
          return body.getContentLength();
        }

        @Override
        public void writeTo(BufferedSink sink) throws IOException {
          try {
            body.writeTo(sink);
            // MockWebServer flushes right after this returns; flushing here puts the answer in
            // the socket's send buffer before close() may go on to close the socket.
            sink.flush();
          } finally {
            release();
          }
        }
      });
    }
  }

  /** Counts a request that close() may have to wait for. */
  Hold hold() {
    synchronized (lock) {
      held++;
    }
    return new Hold();
  }

  /**
   * Waits until every hold taken so far is released, at most {@code bound}.
   *
   * @return true if none is left; false if the bound passed first
   */
  boolean awaitReleased(Duration bound) throws InterruptedException {
    long deadline = System.nanoTime() + bound.toNanos();
    synchronized (lock) {
      while (held > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return true;
    }
  }
}
