package dev.idem.spring.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.URI;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.AbstractClientHttpRequestFactoryWrapper;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.SimpleClientHttpRequestFactory;

/**
 * The attempt timeout reaches the HttpURLConnection a keyed request is sent on, whatever sits over
 * the simple factory: an app's wrapping factory, the starter's own redirect twin. Deterministic: no
 * request is sent; the connections are opened (not connected) and their timeouts read.
 */
class KeyedAttemptTimeoutsTest {
  private static final String KEY_HEADER = "Idempotency-Key";
  private static final URI TARGET = URI.create("http://127.0.0.1:9/orders");
  private static final Supplier<Duration> ONE_SECOND = () -> Duration.ofSeconds(1);

  @Test
  void aKeyedRequestOfASimpleFactoryBehindAnAppsWrapperIsBoundedAndAnUnkeyedOneIsNot() throws IOException {
    Simple simple = new Simple();
    ClientHttpRequestFactory bounded =
        KeyedAttemptTimeouts.bound(new PassThrough(simple), ONE_SECOND, KEY_HEADER, "test", true);

    send(bounded, true);
    send(bounded, false);

    assertEquals(2, simple.opened.size());
    assertEquals(1000, simple.opened.get(0).getReadTimeout(), "the keyed request's read timeout");
    assertEquals(1000, simple.opened.get(0).getConnectTimeout(), "the keyed request's connect timeout");
    assertEquals(0, simple.opened.get(1).getReadTimeout(), "an unkeyed request keeps the factory as it is");
  }

  @Test
  void theKeyedTwinOfTheStartersRedirectRoutingIsBoundedAndTheOtherFactoryIsNot() throws IOException {
    Simple others = new Simple();
    Simple twin = new Simple();
    ClientHttpRequestFactory bounded = KeyedAttemptTimeouts.bound(
        KeyedRedirects.routing(others, twin, KEY_HEADER), ONE_SECOND, KEY_HEADER, "test", true);

    send(bounded, true);
    send(bounded, false);

    assertEquals(1000, twin.opened.get(0).getReadTimeout(), "the keyed twin's request");
    assertEquals(0, others.opened.get(0).getReadTimeout(), "the unkeyed request");
    assertSame(bounded, KeyedAttemptTimeouts.bound(bounded, ONE_SECOND, KEY_HEADER, "test", true),
        "bounding twice changes nothing");
  }

  @Test
  void aLongerTimeoutOfTheAppIsLoweredAndAShorterOneKept() throws IOException {
    Simple longer = new Simple();
    longer.setReadTimeout(30_000);
    Simple shorter = new Simple();
    shorter.setReadTimeout(200);
    send(KeyedAttemptTimeouts.every(new PassThrough(longer), ONE_SECOND), true);
    send(KeyedAttemptTimeouts.every(shorter, ONE_SECOND), true);
    assertEquals(1000, longer.opened.get(0).getReadTimeout());
    assertEquals(200, shorter.opened.get(0).getReadTimeout());
  }

  @Test
  void aFactoryThatStopsOnAnInterruptIsLeftAsItIs() {
    JdkClientHttpRequestFactory jdk = new JdkClientHttpRequestFactory();
    assertSame(jdk, KeyedAttemptTimeouts.bound(jdk, ONE_SECOND, KEY_HEADER, "test", true));
    PassThrough wrapped = new PassThrough(jdk);
    assertSame(wrapped, KeyedAttemptTimeouts.bound(wrapped, ONE_SECOND, KEY_HEADER, "test", true));
  }

  /** Asks for the body: the routing then creates the chosen factory's request, which opens its connection. */
  private static void send(ClientHttpRequestFactory factory, boolean keyed) throws IOException {
    ClientHttpRequest request = factory.createRequest(TARGET, HttpMethod.POST);
    if (keyed) {
      request.getHeaders().set(KEY_HEADER, "k-1");
    }
    request.getBody();
  }

  /** Spring's simple factory, keeping the connections it opens (not connected). */
  private static final class Simple extends SimpleClientHttpRequestFactory {
    final List<HttpURLConnection> opened = new ArrayList<>();

    @Override
    protected HttpURLConnection openConnection(URL url, Proxy proxy) throws IOException {
      HttpURLConnection connection = super.openConnection(url, proxy);
      opened.add(connection);
      return connection;
    }
  }

  /** An app's wrapping factory that hands the delegate's request on as it is. */
  private static final class PassThrough extends AbstractClientHttpRequestFactoryWrapper {
    PassThrough(ClientHttpRequestFactory delegate) {
      super(delegate);
    }

    @Override
    protected ClientHttpRequest createRequest(URI uri, HttpMethod method, ClientHttpRequestFactory delegate)
        throws IOException {
      return delegate.createRequest(uri, method);
    }
  }
}
