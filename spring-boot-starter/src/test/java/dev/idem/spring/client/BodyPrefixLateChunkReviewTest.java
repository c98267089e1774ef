package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * BodyPrefix hands the rest of a live (pooled, Netty) error body to the caller through a unicast
 * sink: past the prefix, {@code hookOnNext} does {@code rest.tryEmitNext(chunk)} and ignores the
 * result. Reactive Streams rule 2.8 lets a publisher deliver a chunk it was asked for after the
 * subscriber cancelled (the caller asked for one more chunk, then gave up: a decoder's size limit,
 * a take(n), a timeout); the sink, cancelled, refuses it (FAIL_CANCELLED) and no one releases the
 * buffer: a Netty leak ("LEAK: ByteBuf.release() was not called") per such response, on the path
 * that takes long error bodies. Expected: every buffer the body delivered is released.
 */
class BodyPrefixLateChunkReviewTest {
  private final NettyDataBufferFactory buffers = new NettyDataBufferFactory(new UnpooledByteBufAllocator(false));

  @Test
  void aChunkDeliveredJustAfterTheCallerCancelledIsReleased() {
    AtomicReference<Subscriber<? super DataBuffer>> upstream = new AtomicReference<>();
    AtomicLong requested = new AtomicLong();
    AtomicBoolean cancelled = new AtomicBoolean();
    // A live body: answers each request later (as the network does), first with the whole prefix.
    Publisher<DataBuffer> live = s -> {
      upstream.set(s);
      s.onSubscribe(new Subscription() {
        @Override
        public void request(long n) {
          requested.addAndGet(n);
        }

        @Override
        public void cancel() {
          cancelled.set(true);
        }
      });
    };
    AtomicReference<BodyPrefix> read = new AtomicReference<>();
    BodyPrefix.of(Flux.from(live)).subscribe(read::set);
    assertEquals(1, requested.get());
    upstream.get().onNext(chunk(64 * 1024 + 1)); // the prefix, exactly: Idem asks for no more
    assertNotNull(read.get(), "the prefix was not read");

    // The caller reads the prefix and asks for one more chunk, then gives up.
    BaseSubscriber<DataBuffer> caller = new BaseSubscriber<>() {
      @Override
      protected void hookOnSubscribe(Subscription subscription) {
        request(2);
      }

      @Override
      protected void hookOnNext(DataBuffer value) {
        DataBufferUtils.release(value);
      }
    };
    read.get().body().subscribe(caller);
    assertEquals(2, requested.get(), "the caller's second chunk was not asked for");
    caller.dispose();
    assertEquals(true, cancelled.get(), "the live body was not cancelled");

    // The chunk that was on its way when the caller cancelled (rule 2.8).
    DataBuffer late = chunk(8 * 1024);
    ByteBuf nettyBuf = ((org.springframework.core.io.buffer.NettyDataBuffer) late).getNativeBuffer();
    upstream.get().onNext(late);
    assertEquals(0, nettyBuf.refCnt(), "the chunk delivered just after the caller cancelled was never released:"
        + " a pooled Netty buffer leaked");
  }

  private DataBuffer chunk(int size) {
    DataBuffer b = buffers.allocateBuffer(size);
    b.write(new byte[size]);
    return b;
  }
}
