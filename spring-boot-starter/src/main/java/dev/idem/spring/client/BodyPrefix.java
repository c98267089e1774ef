package dev.idem.spring.client;

import dev.idem.core.spi.ResponseSnapshot;
import java.io.ByteArrayOutputStream;
import org.reactivestreams.Subscription;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Reads a live WebClient response body up to one byte over {@link ResponseSnapshot#MAX_CAPTURED_BODY}
 * (enough to tell a body that fits from one that does not, as {@link CapturedResponse} reads a
 * RestClient's), then stops asking for more: the rest stays on the wire, for the caller who gets
 * the response ({@link #body()}: the prefix, then the rest, read as the caller asks for it). So an
 * error body of any length holds at most the prefix and one chunk in memory, and never fails the
 * attempt. Every live chunk is released by someone: the caller who takes it, else this class (a
 * chunk the sink refuses or still holds when the caller cancels, or one delivered after the body
 * was let go, as Reactive Streams 2.8 allows). The status and headers arrived before this runs, so a body that breaks off while the
 * prefix is read leaves the attempt answered: the caller reads what arrived, then the same error.
 *
 * <p>One per attempt. The upstream's signals are serial (Reactive Streams); {@link #body()} may be
 * subscribed once, from any thread; {@link #release()} from any thread.
 */
final class BodyPrefix extends BaseSubscriber<DataBuffer> {
  private static final int LIMIT = ResponseSnapshot.MAX_CAPTURED_BODY + 1;

  private final ByteArrayOutputStream received = new ByteArrayOutputStream();
  private final Sinks.One<BodyPrefix> read = Sinks.one();
  /** What comes after the prefix: the upstream's chunks as the caller asks for them, and its end. */
  private final Sinks.Many<DataBuffer> rest = Sinks.many().unicast().onBackpressureBuffer();
  /** Written and read on the upstream's serial signals only, until {@link #read} completes. */
  private boolean reading = true;
  private boolean ended;
  private Throwable brokeOff;

  /** Reads the prefix of {@code body}; completes once the prefix is read, or the body ended. */
  static Mono<BodyPrefix> of(Flux<DataBuffer> body) {
    return Mono.defer(() -> {
      BodyPrefix prefix = new BodyPrefix();
      body.subscribe(prefix);
      // Cancelled before the prefix is read (the caller went away): the body is let go.
      return prefix.read.asMono().doOnCancel(prefix::release);
    });
  }

  private BodyPrefix() {}

  @Override
  protected void hookOnSubscribe(Subscription subscription) {
    request(1); // one chunk at a time: nothing is asked for past the prefix
  }

  @Override
  protected void hookOnNext(DataBuffer chunk) {
    if (isDisposed()) {
      // Asked for before the caller (or release()) let the body go, delivered after (Reactive
      // Streams 2.8): no one will read it, and a pooled buffer must be released by someone.
      DataBufferUtils.release(chunk);
      return;
    }
    if (!reading) {
      // Asked for by the caller; a sink the caller cancelled meanwhile refuses it, and then it is ours.
      if (rest.tryEmitNext(chunk).isFailure()) {
        DataBufferUtils.release(chunk);
      }
      return;
    }
    try {
      int take = Math.min(chunk.readableByteCount(), LIMIT - received.size());
      byte[] bytes = new byte[take];
      chunk.read(bytes);
      received.writeBytes(bytes);
      if (chunk.readableByteCount() > 0) {
        // The chunk that crossed the limit: its remainder (one chunk at most) is copied, so that
        // no pooled buffer waits for a caller who may never come.
        byte[] over = new byte[chunk.readableByteCount()];
        chunk.read(over);
        rest.tryEmitNext(DefaultDataBufferFactory.sharedInstance.wrap(over));
      }
    } finally {
      DataBufferUtils.release(chunk);
    }
    if (received.size() < LIMIT) {
      request(1);
    } else {
      reading = false;
      read.tryEmitValue(this);
    }
  }

  @Override
  protected void hookOnComplete() {
    rest.tryEmitComplete();
    if (reading) {
      reading = false;
      ended = true;
      read.tryEmitValue(this);
    }
  }

  @Override
  protected void hookOnError(Throwable error) {
    rest.tryEmitError(error);
    if (reading) {
      reading = false;
      brokeOff = error;
      read.tryEmitValue(this);
    }
  }

  /** The bytes read: the whole body, or its first bytes up to one over the cap. */
  byte[] bytes() {
    return received.toByteArray();
  }

  /** The body, if all of it arrived and fits {@link ResponseSnapshot#MAX_CAPTURED_BODY}; else null. */
  byte[] whole() {
    return ended && received.size() <= ResponseSnapshot.MAX_CAPTURED_BODY ? received.toByteArray() : null;
  }

  /** The error that broke the body off while its prefix was read, or null. */
  Throwable brokeOff() {
    return brokeOff;
  }

  /**
   * The body for the caller: the prefix, then the rest of the live body (asked for as the caller
   * asks), or the error that broke it off. Once only; cancelling it lets the live body go.
   */
  Flux<DataBuffer> body() {
    byte[] head = received.toByteArray();
    return Flux.concat(
        Mono.fromSupplier(() -> DefaultDataBufferFactory.sharedInstance.wrap(head)),
        rest.asFlux()
            // What the sink still holds when the caller cancels (chunks asked for, not yet taken)
            // is discarded: released, since some are the live body's pooled buffers.
            .doOnDiscard(DataBuffer.class, DataBufferUtils::release)
            .doOnRequest(this::request)
            .doOnCancel(this::dispose));
  }

  /** Lets the live body go, unread (its connection is closed): for a response no one will read. */
  void release() {
    dispose();
    // What the rest holds (one copied chunk, or an end) is no one's: drained, so nothing waits.
    rest.asFlux().subscribe(DataBufferUtils::release, e -> { });
  }
}
