package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.spi.RequestSnapshot;
import java.net.URI;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A snapshot's and an operation's text is what apps log (an exception message, a debug line): it
 * names the request by method, scheme, host, port and path, never by user info, query or fragment,
 * any of which may carry a credential. The executor refuses such a URI, but the operation it
 * refuses is still the app's to log.
 */
class SnapshotTextTest {
  @ParameterizedTest
  @CsvSource({
      "https://u:qzPLANTa@api.example.com/v1/orders?api_key=qzPLANTb#access_token=qzPLANTc,"
          + " https://api.example.com/v1/orders",
      "http://svc:qzPLANTa@payments_api:8080/v1/orders?token=qzPLANTb, http://payments_api:8080/v1/orders",
      "http://api.example.com:8080/v1/orders, http://api.example.com:8080/v1/orders",
  })
  void theTextNamesTheRequestWithoutUserInfoQueryOrFragment(String uri, String shown) {
    RequestSnapshot s = RequestSnapshot.builder("POST", URI.create(uri)).build();
    assertEquals("POST " + shown + " (0 body bytes)", s.toString());
    String op = Operation.builder("create-order", s).build().toString();
    assertFalse(op.contains("qzPLANT"), op);
  }

  @ParameterizedTest
  @CsvSource({"//u:qzPLANTa@api.example.com/v1?api_key=qzPLANTb", "/v1/orders#access_token=qzPLANTc"})
  void aRelativeUriIsRefusedWithoutQuotingItsCredentials(String uri) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> RequestSnapshot.builder("POST", URI.create(uri)));
    assertFalse(e.getMessage().contains("qzPLANT"), e.getMessage());
  }
}
