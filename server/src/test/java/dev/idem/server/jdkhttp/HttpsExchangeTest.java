package dev.idem.server.jdkhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsServer;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test for a defect found by review, described as it was; fixed: the handler gets a {@code SecureExchangeView} on an HTTPS exchange.
 *
 * <p>On an {@code HttpsServer}, every exchange a handler gets is an {@code HttpsExchange}, which is
 * how it reaches the TLS session (the client certificate of a mutual-TLS API, the cipher). Behind
 * {@code IdempotencyHttpFilter} a keyed request's handler gets the guard's
 * {@code CapturingExchange}, which extends {@code HttpExchange} only: the handler's
 * {@code (HttpsExchange) exchange} throws {@code ClassCastException}, the claim is released and the
 * client gets no answer. The same handler serves the same PUT without a key (unguarded).
 */
class HttpsExchangeTest {
  @TempDir
  Path dir;

  @Test
  void aGuardedHandlerOnAnHttpsServerStillGetsItsHttpsExchange() throws Exception {
    Path keystore = dir.resolve("server.p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
        "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
        "-ext", "SAN=ip:127.0.0.1", "-validity", "2", "-storetype", "PKCS12", "-keystore", keystore.toString(),
        "-storepass", "changeit", "-keypass", "changeit").redirectErrorStream(true).start();
    keytool.getInputStream().readAllBytes();
    assertEquals(0, keytool.waitFor(), "keytool");
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keystore)) {
      ks.load(in, "changeit".toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, "changeit".toCharArray());
    SSLContext serverTls = SSLContext.getInstance("TLS");
    serverTls.init(kmf.getKeyManagers(), null, null);
    TrustManager trustAll = new X509TrustManager() {
      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType) {}

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType) {}

      @Override
      public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
      }
    };
    SSLContext clientTls = SSLContext.getInstance("TLS");
    clientTls.init(null, new TrustManager[] {trustAll}, null);

    AtomicInteger runs = new AtomicInteger();
    ExecutorService executor = Executors.newFixedThreadPool(2);
    HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    server.setHttpsConfigurator(new HttpsConfigurator(serverTls));
    server.setExecutor(executor);
    IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).purgeInterval(null).build();
    server.createContext("/orders", exchange -> {
      exchange.getRequestBody().readAllBytes();
      // A mutual-TLS API reads its client's certificate here; this one reads the protocol.
      String protocol = ((HttpsExchange) exchange).getSSLSession().getProtocol();
      byte[] body = ("{\"order\":" + runs.incrementAndGet() + ",\"tls\":\"" + protocol + "\"}")
          .getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(201, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }).getFilters().add(new IdempotencyHttpFilter(guard));
    server.start();
    try {
      SSLParameters noHostnameCheck = new SSLParameters();
      noHostnameCheck.setEndpointIdentificationAlgorithm(null);
      HttpClient http = HttpClient.newBuilder().sslContext(clientTls).sslParameters(noHostnameCheck).build();
      URI uri = URI.create("https://127.0.0.1:" + server.getAddress().getPort() + "/orders");
      HttpResponse<String> unkeyed = http.send(HttpRequest.newBuilder(uri)
          .PUT(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(201, unkeyed.statusCode(), "the handler itself works (an unkeyed PUT runs unguarded): " + unkeyed.body());

      HttpResponse<String> keyed;
      try {
        keyed = http.send(HttpRequest.newBuilder(uri).header("Idempotency-Key", "k-1")
            .PUT(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
      } catch (java.io.IOException dropped) {
        throw new AssertionError("the keyed request got no answer (" + dropped.getMessage() + ")", dropped);
      }
      assertEquals(201, keyed.statusCode(), keyed.body());
    } finally {
      server.stop(0);
      executor.shutdownNow();
      executor.awaitTermination(5, TimeUnit.SECONDS);
      guard.close();
    }
  }
}
