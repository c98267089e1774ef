package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationState;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.BodySubscriber;
import java.net.http.HttpResponse.BodySubscribers;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A body handler whose subscriber throws as it is handed the body (a strict parser that rejects
 * the first bytes, {@link ThrowingSubscriberTest#throwingOnNext()}), on a final answer whose body
 * Idem read in part for the journal: a 400 (final, not retried) with a long error body, of which
 * Idem reads up to 64 KiB before the call returns. The JDK client, given the same handler, cancels
 * the exchange and closes the connection. Idem does not: the captured prefix is pushed to the
 * caller's subscriber synchronously inside {@code ResponseRelay.attach} (its {@code onSubscribe}
 * requests, {@code Downstream.request} calls {@code onNext}, which throws), and the exception
 * escapes {@code BodyHandlers.attach} / {@code CallEngine.respond} without the relay being
 * cancelled ({@code attach} set {@code downstream} first, so the later {@code release()} is a no-op,
 * and the async path's catch in {@code CallEngine.afterCapture} only completes the caller's future).
 * The upstream subscription is never cancelled: the connection stays open, busy, with the rest of
 * the body unread, for as long as the server keeps it (here: an endless body, forever). Each such
 * call leaks one connection (and the server's side of it).
 *
 * <p>Where: {@code BodyHandlers.attach} (catches only {@code handler.apply}'s RuntimeException),
 * {@code ResponseRelay.attach} / {@code Downstream.request} (a throwing {@code onNext} of the prefix
 * neither cancels upstream nor ends the subscriber), {@code CallEngine.respond} callers.
 *
 * <p>Fixed: {@code ResponseRelay} cancels the body at the wire when the caller's subscriber throws
 * from a call the relay makes on the caller's thread ({@code attach}'s onSubscribe, the prefix's
 * onNext from the subscriber's request), then lets the throw go on as before.
 *
 * <p>Real socket, as {@link CancelWhileBodyStreamsLeakTest}: the server counts down a latch when
 * the client gives the connection up; virtual time for the executor.
 */
class RvRjdkThrowingSubscriberLeaksConnectionTest {

  /** Answers one request 400 with a chunked body that never ends; counts down when the client closes. */
  static final class EndlessErrorServer implements AutoCloseable {
    final ServerSocket socket;
    final CountDownLatch answered = new CountDownLatch(1);
    final CountDownLatch clientClosed = new CountDownLatch(1);

    EndlessErrorServer() throws Exception {
      socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread t = new Thread(this::serve, "endless-400");
      t.setDaemon(true);
      t.start();
    }

    URI url() {
      return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/orders");
    }

    private void serve() {
      try (Socket s = socket.accept()) {
        BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
        String line;
        int length = 0;
        while ((line = in.readLine()) != null && !line.isEmpty()) {
          if (line.regionMatches(true, 0, "content-length:", 0, 15)) {
            length = Integer.parseInt(line.substring(15).trim());
          }
        }
        for (int i = 0; i < length; i++) {
          in.read();
        }
        OutputStream out = s.getOutputStream();
        out.write("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
            .getBytes(StandardCharsets.US_ASCII));
        byte[] chunk = new byte[1024];
        java.util.Arrays.fill(chunk, (byte) 'x');
        while (true) { // a write fails once the client closes its end
          out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
          out.write(chunk);
          out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
          out.flush();
          answered.countDown();
          Thread.sleep(5);
        }
      } catch (Exception e) {
        clientClosed.countDown();
      }
    }

    @Override
    public void close() throws Exception {
      socket.close();
    }
  }

  private static HttpRequest post(URI u) {
    return HttpRequest.newBuilder(u)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A-1\"}"))
        .build();
  }

  @Test
  void theJdkClientClosesTheConnectionWhenTheSubscriberThrows() throws Exception {
    try (EndlessErrorServer server = new EndlessErrorServer()) {
      Throwable thrown = null;
      try {
        Fixture.JDK.send(post(server.url()), ThrowingSubscriberTest.throwingOnNext());
      } catch (Exception e) {
        thrown = e;
      }
      assertNotNull(thrown, "the baseline: send fails");
      assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS), "the baseline: the JDK client gives the connection up");
    }
  }

  @Test
  void aKeyedSendWhoseSubscriberThrowsLeavesTheConnectionOpen() throws Exception {
    try (EndlessErrorServer server = new EndlessErrorServer()) {
      Fixture f = new Fixture();
      OperationCall call = f.client.operation("create-order");
      Throwable thrown = null;
      try {
        call.send(post(server.url()), ThrowingSubscriberTest.throwingOnNext());
      } catch (Exception e) {
        thrown = e;
      }
      assertNotNull(thrown, "send fails with the subscriber's failure");
      assertTrue(f.record(call.operationId()).state() == OperationState.FAILED, "settled on its 400");
      assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS),
          "5 s after send threw the subscriber's exception, the 400's body is still held open (unread, never"
              + " cancelled): the connection leaks, where the JDK client closes it");
    }
  }

  @Test
  void aKeyedSendAsyncWhoseSubscriberThrowsLeavesTheConnectionOpen() throws Exception {
    try (EndlessErrorServer server = new EndlessErrorServer()) {
      Fixture f = new Fixture();
      OperationCall call = f.client.operation("create-order");
      Throwable thrown = null;
      try {
        f.await(call.sendAsync(post(server.url()), ThrowingSubscriberTest.throwingOnNext()));
      } catch (Exception e) {
        thrown = e;
      }
      assertNotNull(thrown, "the future fails with the subscriber's failure");
      assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS),
          "5 s after sendAsync's future failed with the subscriber's exception, the 400's body is still held"
              + " open (unread, never cancelled): the connection leaks, where the JDK client closes it");
    }
  }

  /** Takes the first item (the prefix Idem read), then throws on the next, as a parser failing midway. */
  static BodyHandler<String> throwingOnTheSecondItem() {
    return info -> new BodySubscriber<String>() {
      final BodySubscriber<String> inner = BodySubscribers.ofString(StandardCharsets.UTF_8);
      int items;

      @Override
      public CompletionStage<String> getBody() {
        return inner.getBody();
      }

      @Override
      public void onSubscribe(Flow.Subscription s) {
        inner.onSubscribe(s);
      }

      @Override
      public void onNext(List<ByteBuffer> item) {
        if (++items == 2) {
          throw new IllegalStateException("parser rejected the body midway");
        }
        inner.onNext(item);
      }

      @Override
      public void onError(Throwable t) {
        inner.onError(t);
      }

      @Override
      public void onComplete() {
        inner.onComplete();
      }
    };
  }

  /**
   * The same, with the subscriber throwing on a live item after the prefix (on the JDK's thread,
   * through the relay's own onNext): the connection is given up, and the call fails with the
   * subscriber's exception, as the JDK client's does. This path passed before the fix too (the
   * throw reaches the JDK, which cancels the exchange): it guards that the fix left it so.
   */
  @Test
  void aKeyedSendWhoseSubscriberThrowsOnALiveItemGivesTheConnectionUp() throws Exception {
    try (EndlessErrorServer server = new EndlessErrorServer()) {
      Fixture f = new Fixture();
      OperationCall call = f.client.operation("create-order");
      Throwable thrown = null;
      try {
        call.send(post(server.url()), throwingOnTheSecondItem());
      } catch (Exception e) {
        thrown = e;
      }
      assertNotNull(thrown, "send fails with the subscriber's failure");
      assertTrue(chain(thrown).contains("parser rejected the body midway"), chain(thrown));
      assertTrue(f.record(call.operationId()).state() == OperationState.FAILED, "settled on its 400");
      assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS),
          "5 s after send failed, the 400's body is still held open: the connection leaks");
    }
  }

  private static String chain(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      b.append(c).append(" <- ");
    }
    return b.toString();
  }
}
