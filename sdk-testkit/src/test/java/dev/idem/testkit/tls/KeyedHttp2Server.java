package dev.idem.testkit.tls;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.X509TrustManager;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.HttpUrl;
import okhttp3.Protocol;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;

/**
 * For the adapters' HTTP/2 tests: a MockWebServer over TLS that offers HTTP/2 by ALPN (how
 * clients reach HTTP/2 in production) and acts once per {@code Idempotency-Key}, answering every
 * request of a key with that key's effect, as a server honouring keys does: a retry under another
 * key is a second effect. The first stream can be cut as its headers arrive or as its answer
 * starts. Clients trust it through {@link #clientContext()} / {@link #trustManager()}.
 *
 * <p>mockwebserver3 5.5.1 takes a stream's request-start and response-start effects over HTTP/2
 * from {@code Dispatcher.peek()}, asked as the stream's headers arrive, not from the dispatched
 * response (HTTP/1.1 reads the dispatched one); so the first stream's effects are given there,
 * to the stream handler only (the server also peeks as it accepts a connection, before the TLS
 * handshake, where a request-start effect would fail the handshake instead).
 */
public final class KeyedHttp2Server implements AutoCloseable {
  private static final HeldCertificate CERT = new HeldCertificate.Builder()
      .commonName("localhost")
      .addSubjectAlternativeName("localhost")
      .addSubjectAlternativeName("127.0.0.1")
      .build();
  private static final HandshakeCertificates CLIENT =
      new HandshakeCertificates.Builder().addTrustedCertificate(CERT.certificate()).build();

  private final MockWebServer server = new MockWebServer();
  private final Keyed keyed = new Keyed();

  private KeyedHttp2Server() {
  }

  /** Starts one on an ephemeral loopback port, offering HTTP/2 and HTTP/1.1. */
  public static KeyedHttp2Server start() throws IOException {
    KeyedHttp2Server s = new KeyedHttp2Server();
    s.server.useHttps(new HandshakeCertificates.Builder().heldCertificate(CERT).build().sslSocketFactory());
    s.server.setProtocols(List.of(Protocol.HTTP_2, Protocol.HTTP_1_1));
    s.server.setDispatcher(s.keyed);
    s.server.start();
    return s;
  }

  /** An SSL context that trusts this server's certificate only (java.net.http). */
  public static SSLContext clientContext() {
    return CLIENT.sslContext();
  }

  /** A socket factory that trusts this server's certificate only (OkHttp, with {@link #trustManager()}). */
  public static SSLSocketFactory socketFactory() {
    return CLIENT.sslSocketFactory();
  }

  /** The trust manager of {@link #socketFactory()}. */
  public static X509TrustManager trustManager() {
    return CLIENT.trustManager();
  }

  public HttpUrl url(String path) {
    return server.url(path);
  }

  /** The first stream's answer gets {@code effect} as it starts (the server has acted by then). */
  public void cutFirstAnswer(SocketEffect effect) {
    keyed.firstAnswer = effect;
  }

  /** The first stream gets {@code effect} as its headers arrive, before its body is read. */
  public void cutFirstHeaders(SocketEffect effect) {
    keyed.onHeaders = effect;
  }

  /** Effects in all, under any key. */
  public int effects() {
    return keyed.effects.get();
  }

  /**
   * What reached the dispatcher, in order: each request's protocol and key ("HTTP/2 key"; a
   * stream cut at its start may be booked as "HTTP/2 null", the line without headers, and only
   * after the client saw the cut).
   */
  public List<String> seen() {
    synchronized (keyed.seen) {
      return List.copyOf(keyed.seen);
    }
  }

  @Override
  public void close() {
    server.close();
  }

  private static final class Keyed extends Dispatcher {
    volatile SocketEffect firstAnswer;
    volatile SocketEffect onHeaders;
    private final Map<String, Integer> effectOfKey = new ConcurrentHashMap<>();
    private final AtomicInteger effects = new AtomicInteger();
    private final List<String> seen = new ArrayList<>();

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      String key = request.getHeaders().get("Idempotency-Key");
      boolean first;
      synchronized (seen) {
        seen.add(request.getVersion() + " " + key);
        first = seen.size() == 1;
      }
      if (key == null) {
        return new MockResponse.Builder().code(400).build();
      }
      int effect = effectOfKey.computeIfAbsent(key, k -> effects.incrementAndGet());
      MockResponse.Builder answer = new MockResponse.Builder().code(201)
          .addHeader("Content-Type", "application/json").body("{\"effect\":" + effect + "}");
      SocketEffect onFirst = firstAnswer;
      if (first && onFirst != null) {
        answer.onResponseStart(onFirst);  // where HTTP/1.1 reads it
      }
      return answer.build();
    }

    @Override
    public MockResponse peek() {
      SocketEffect onFirst = firstAnswer;
      SocketEffect onHead = onHeaders;
      synchronized (seen) {
        if (!seen.isEmpty() || (onFirst == null && onHead == null) || !askedForAStream()) {
          return super.peek();
        }
      }
      MockResponse.Builder b = new MockResponse.Builder();
      if (onFirst != null) {
        b.onResponseStart(onFirst);
      }
      if (onHead != null) {
        b.onRequestStart(onHead);
      }
      return b.build();
    }

    private static boolean askedForAStream() {
      return StackWalker.getInstance().walk(frames -> frames.anyMatch(
          fr -> fr.getClassName().endsWith("Http2SocketHandler") && fr.getMethodName().equals("onStream")));
    }
  }
}
