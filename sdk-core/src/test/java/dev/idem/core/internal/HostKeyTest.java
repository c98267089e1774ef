package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The host key is the breaker's and the retry budget's key and the {@code host} label of events,
 * Micrometer tags and breaker reasons. A host with an underscore (a docker-compose service name)
 * makes java.net.URI read the authority as registry-based: no host, no port, no user info. The key
 * must still be host and port, never the user info, and the same key a server-based URI gets.
 * A journal written before user info was refused for such URIs still holds some, and a resume
 * labels its attempts with this key.
 */
class HostKeyTest {
  @ParameterizedTest
  @CsvSource({
      "http://svc:qzPLANTpw@payments_api:8080/v1/orders, payments_api:8080",
      "http://svc@payments_api/v1/orders, payments_api:80",
      "https://a:b@c@Payments_API/v1, payments_api:443",
      "http://payments_api:8080/v1/orders, payments_api:8080",
      "http://payments_api/v1/orders, payments_api:80",
      "https://Payments_API/v1/orders#frag, payments_api:443",
      "https://API.example.com/v1/orders, api.example.com:443",
      "http://api.example.com:8080/v1/orders, api.example.com:8080",
  })
  void theHostKeyIsHostAndPortWithoutUserInfo(String uri, String key) {
    assertEquals(key, HostGuard.hostOf(URI.create(uri)));
  }
}
