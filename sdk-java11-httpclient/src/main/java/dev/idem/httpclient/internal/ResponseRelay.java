package dev.idem.httpclient.internal;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.adapter.CaptureDeadline;
import dev.idem.core.spi.adapter.CaptureRule;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodySubscriber;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;

/**
 * One attempt's response body, held at the wire: subscribed to the JDK's
 * {@code BodyHandlers.ofPublisher()} publisher, it pulls at most
 * {@link ResponseSnapshot#MAX_CAPTURED_BODY} + 1 bytes, and only when the {@link CaptureRule} reads
 * the body, then pulls nothing more until the caller's {@link BodySubscriber} is
 * {@linkplain #attach attached}: that subscriber gets the captured prefix, then the rest as it
 * arrives and as fast as it asks, as if the JDK client had fed it directly. An attempt whose
 * response is not handed over is {@linkplain #discard discarded}: its subscription is cancelled,
 * and the body is never read further; one handed over to a caller who then cancelled is
 * {@linkplain #cancel cancelled} the same way. The capture ends at its {@link CaptureDeadline} (or when the
 * body breaks off) with the body not kept: the JDK's request timeout ends at the headers, so a body
 * that trickles would otherwise hold the attempt as long as the server likes.
 *
 * <p>Thread-safe: the JDK's threads and the caller's meet under this object's lock, and subscriber
 * signals are sent outside it.
 */
public final class ResponseRelay implements Flow.Subscriber<List<ByteBuffer>> {
  private static final int CAP = ResponseSnapshot.MAX_CAPTURED_BODY;

  private final CompletableFuture<Void> captured = new CompletableFuture<>();
  private final List<ByteBuffer> prefix = new ArrayList<>();
  private Flow.Subscription upstream;
  private boolean capturing;
  private long prefixBytes;
  private boolean complete;
  private Throwable error;
  private boolean discarded;
  private BodySubscriber<?> downstream;
  /** Whether the caller's subscriber got (or needed no) prefix: only then do live signals go to it directly. */
  private boolean prefixSent;
  /** Whether a thread is sending the caller's subscriber what is held; others only add demand then. */
  private boolean draining;
  /** What the caller's subscriber asked for and was not yet sent or passed upstream, while items are held. */
  private long demand;
  /** Whether the caller's subscriber got onComplete or onError. */
  private boolean terminated;
  /**
   * Whether the capture asked the wire for an item that has not arrived yet: a capture stopped at
   * its time limit leaves one, which the hand-over counts against the subscriber's demand.
   */
  private boolean requestedAhead;

  ResponseRelay() {}

  /**
   * Subscribes to {@code body} and reads what the snapshot of {@code raw} needs, until the body
   * ends, proves longer than the cap, breaks off, or {@code deadline} passes: the status line and
   * headers are in, so the attempt is answered whatever becomes of its body, and a body that did
   * not arrive whole by then is not kept (what did arrive, and the rest, or the failure, go on to
   * the caller's subscriber).
   *
   * @return the relay, and its snapshot when the capture is over; never fails
   */
  static Capture capture(HttpResponse<Flow.Publisher<List<ByteBuffer>>> raw, boolean wholeUpToCap,
      CaptureDeadline deadline) {
    ResponseRelay relay = new ResponseRelay();
    long declared = raw.headers().firstValueAsLong("Content-Length").orElse(-1);
    relay.capturing = CaptureRule.readsBody(raw.statusCode(), declared, wholeUpToCap);
    if (!relay.capturing) {
      relay.captured.complete(null);
    } else if (deadline.bounded()) {
      // The JDK's own timer (it cancels the task once the capture is over); what runs on its thread
      // when it fires is the snapshot, and the executor hands its own work to its own threads.
      relay.captured.completeOnTimeout(null, deadline.remainingNanos(System.nanoTime()), TimeUnit.NANOSECONDS);
    }
    raw.body().subscribe(relay);
    return new Capture(relay, relay.captured.thenApply(v -> {
      relay.endCapture();
      return new Captured(relay, relay.snapshot(raw, declared));
    }));
  }

  /** A capture under way: the relay, and its snapshot once the capture is over. */
  record Capture(ResponseRelay relay, CompletableFuture<Captured> captured) {}

  /** A snapshot and the relay that still holds the body it came from. */
  record Captured(ResponseRelay relay, ResponseSnapshot snapshot) {}

  /** Stops reading for the journal now; the snapshot keeps no body unless it had all arrived. */
  void stopCapturing() {
    endCapture();
    captured.complete(null);
  }

  private synchronized void endCapture() {
    capturing = false;
  }

  private synchronized ResponseSnapshot snapshot(HttpResponse<?> raw, long declared) {
    byte[] whole = null;
    if (complete && error == null && prefixBytes <= CAP) {
      whole = new byte[(int) prefixBytes];
      int at = 0;
      for (ByteBuffer b : prefix) {
        int n = b.remaining();
        b.duplicate().get(whole, at, n);
        at += n;
      }
    }
    return CaptureRule.snapshot(raw.statusCode(), raw.headers().map(), whole, declared);
  }


  @Override
  public void onSubscribe(Flow.Subscription s) {
    boolean cancel;
    boolean pull;
    synchronized (this) {
      cancel = upstream != null || discarded;
      if (upstream == null) {
        upstream = s;
      }
      pull = !cancel && capturing;
      requestedAhead |= pull;
    }
    if (cancel) {
      s.cancel();
    } else if (pull) {
      s.request(1);
    }
  }

  @Override
  public void onNext(List<ByteBuffer> item) {
    BodySubscriber<?> to;
    boolean pullMore = false;
    boolean done = false;
    synchronized (this) {
      if (terminated) {
        return; // the caller's subscriber is done, or was cancelled: it gets nothing more
      }
      to = prefixSent ? downstream : null;
      if (to == null) {
        requestedAhead = false;
        prefix.addAll(item);
        for (ByteBuffer b : item) {
          prefixBytes += b.remaining();
        }
        // One item at a time while capturing, so at most one item beyond the cap is ever held.
        pullMore = capturing && prefixBytes <= CAP;
        requestedAhead = pullMore;
        done = capturing && !pullMore;
        if (done) {
          capturing = false;
        }
      }
    }
    if (to != null) {
      // A throw here goes to the JDK, which cancels the exchange and tells this relay's onError.
      to.onNext(item);
    } else if (pullMore) {
      upstream.request(1);
    } else if (done) {
      captured.complete(null);
    }
  }

  @Override
  public void onError(Throwable t) {
    end(t);
  }

  @Override
  public void onComplete() {
    end(null);
  }

  /**
   * The body ended ({@code failure} null) or broke off: tells the caller's subscriber if the prefix
   * already reached it (once), or the capture if no subscriber is attached yet; otherwise the
   * subscriber learns it at its first request, after the prefix.
   */
  private void end(Throwable failure) {
    BodySubscriber<?> to;
    boolean attached;
    synchronized (this) {
      attached = downstream != null;
      to = attached && prefixSent && !terminated ? downstream : null;
      terminated |= to != null;
      if (failure != null) {
        error = failure;
      } else {
        complete = true;
      }
      capturing = false;
      requestedAhead = false;
    }
    if (to != null) {
      if (failure != null) {
        to.onError(failure);
      } else {
        to.onComplete();
      }
    } else if (!attached) {
      // A body that broke off during the capture is not kept; the attempt is answered all the same
      // (its status line arrived), and the caller's subscriber meets the failure after the prefix.
      captured.complete(null);
    }
  }

  /**
   * Hands the body to the caller's subscriber: the captured prefix first, then the live rest.
   *
   * @return the subscriber's body
   */
  <T> CompletableFuture<T> attach(BodySubscriber<T> subscriber) {
    synchronized (this) {
      downstream = subscriber;
    }
    try {
      subscriber.onSubscribe(new Downstream(subscriber));
    } catch (Throwable t) {
      // Its onNext of the prefix, called from its own request, may be what threw.
      subscriberThrew();
      throw t;
    }
    return subscriber.getBody().toCompletableFuture();
  }

  /**
   * The caller's subscriber threw from a method this relay called on the caller's thread (its
   * onSubscribe, or its onNext of the prefix from its own request), where the JDK never sees the
   * throw: by Reactive Streams rule 2.13 its subscription is cancelled. Cancels the body at the
   * wire, as the JDK client does, so the connection is not left open with the rest of the body
   * unread, and drops what was held for it. The subscriber gets no further signal from the body;
   * the throw goes on to whoever called.
   */
  private void subscriberThrew() {
    cancel();
  }

  /**
   * Stops the body even if it was handed over: the caller's future was cancelled (or its thread
   * interrupted) while its subscriber still read the body, so nobody will use what the subscriber
   * makes of the rest. Without this, the body would go on streaming into that subscriber (for
   * {@code ofString}, into memory) for as long as the server sends. Cancels the subscription, as
   * the JDK client does when its own future is cancelled; the caller's subscriber gets no further
   * signal, as a subscriber that cancelled would not.
   */
  void cancel() {
    Flow.Subscription s;
    synchronized (this) {
      discarded = true;
      terminated = true;
      s = upstream;
      prefix.clear();
    }
    if (s != null) {
      s.cancel();
    }
  }

  /** Stops the body unless it was handed over: cancels the subscription, reads nothing more. */
  void discard() {
    Flow.Subscription s;
    synchronized (this) {
      if (downstream != null || discarded) {
        return;
      }
      discarded = true;
      s = upstream;
      prefix.clear();
    }
    if (s != null) {
      s.cancel();
    }
  }

  /** The caller's subscription: the prefix as one item, then demand passed upstream. */
  private final class Downstream implements Flow.Subscription {
    private final BodySubscriber<?> subscriber;

    Downstream(BodySubscriber<?> subscriber) {
      this.subscriber = subscriber;
    }

    @Override
    public void request(long n) {
      if (n <= 0) {
        cancel();
        subscriber.onError(new IllegalArgumentException("non-positive request: " + n)); // rule 3.9
        return;
      }
      try {
        deliver(n);
      } catch (Throwable t) {
        subscriberThrew();
        throw t;
      }
    }

    /**
     * Sends what is held (the prefix, then any item that arrived meanwhile) as far as the demand
     * goes, then the end if the body ended, else hands the rest of the demand upstream and lets
     * live items go to the subscriber directly. One thread at a time sends held items: a request
     * made meanwhile (from the subscriber's onNext, or another thread) only adds its demand, and an
     * item arriving meanwhile (a capture stopped at its time limit may still have one coming) is
     * held behind the prefix, so signals stay in series and bytes in order. Throws what the
     * subscriber throws.
     */
    private void deliver(long n) {
      boolean live = false;
      synchronized (ResponseRelay.this) {
        if (terminated) {
          return;
        }
        if (prefixSent) {
          live = true;
        } else {
          demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
          if (draining) {
            return;
          }
          draining = true;
        }
      }
      if (live) {
        upstream.request(n);
        return;
      }
      boolean drained = false;
      try {
        while (true) {
          List<ByteBuffer> next = null;
          boolean end = false;
          Throwable failed = null;
          long rest = 0;
          synchronized (ResponseRelay.this) {
            if (terminated) {
              drained = true;
              draining = false;
              return;
            }
            if (!prefix.isEmpty()) {
              if (demand == 0) {
                // Held until the subscriber asks; draining is cleared in this same lock, so that a
                // request that comes next drains it (cleared later, such a request only added its
                // demand, and the held item stalled for good: review rtoday3).
                drained = true;
                draining = false;
                return;
              }
              next = List.copyOf(prefix);
              prefix.clear();
              demand--;
            } else if (requestedAhead && demand == 0 && !complete && error == null) {
              // An item the capture asked for is still coming, and the subscriber asked for nothing
              // more: it is held when it comes, until the subscriber asks (going to the subscriber
              // directly, it would exceed its demand: rule 1.1, review rtoday3).
              drained = true;
              draining = false;
              return;
            } else {
              end = complete;
              failed = error;
              terminated = end || failed != null;
              if (!terminated) {
                prefixSent = true;
                // The item the capture asked for, if still coming, is one of the demand.
                rest = requestedAhead ? demand - 1 : demand;
                requestedAhead = false;
                demand = 0;
              }
              drained = true;
              draining = false;
            }
          }
          if (next != null) {
            subscriber.onNext(next);
          } else if (failed != null) {
            subscriber.onError(failed);
            return;
          } else if (end) {
            subscriber.onComplete();
            return;
          } else {
            if (rest > 0) {
              upstream.request(rest);
            }
            return;
          }
        }
      } finally {
        if (!drained) {
          synchronized (ResponseRelay.this) {
            draining = false;
          }
        }
      }
    }

    @Override
    public void cancel() {
      synchronized (ResponseRelay.this) {
        terminated = true;
      }
      upstream.cancel();
    }
  }
}
