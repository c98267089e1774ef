package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.support.Harness;
import dev.idem.core.support.ScriptedTransport;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review rsecrets: the default secret rule ({@code RequestSnapshot.DEFAULT_SECRET_NAME_PARTS}:
 * api-key, apikey, token, secret, password, session, signature, auth, credential; {@code key},
 * {@code -key}; {@code sig}) misses the usual short spellings of a password and a bare JWT, so
 * each is sent and journaled in clear, and shown by {@code idem journal show}, with no warning:
 * <ul>
 *   <li>{@code ?pwd=} and {@code ?passwd=}: the password parameter of many HTTP APIs (SMS and
 *       telephony gateways, legacy partner APIs: {@code /send?user=acme&pwd=...}); the query is
 *       journaled whole, and it is what the rule exists to refuse ({@code ?password=} is);
 *   <li>{@code ?jwt=}: a bearer JWT in the query (download and WebSocket links, Mapbox/Metabase
 *       embeds);
 *   <li>the header {@code X-JWT-Assertion} (WSO2's and other gateways' bearer assertion) and
 *       {@code X-Passwd}: left in the journaled request headers.
 * </ul>
 * The project's stance (RequestSnapshot Javadoc): "a false positive costs a header the transport
 * must re-apply (or an explicit allow), a false negative leaves a credential readable in a file for
 * as long as the journal keeps it". Refusing the query parameters (as {@code ?password=} is) and
 * leaving the headers out would pass.
 */
class RvRsecretsPasswordAndJwtNamesJournaledTest {
  private static final String PLANTED = "planted-credential-rvrsecrets";

  @Test
  void passwordAbbreviationsAndJwtsStayOutOfTheJournal() throws Exception {
    List<String> leaked = new ArrayList<>();
    int n = 0;
    for (String query : List.of("user=acme&pwd=", "user=acme&passwd=", "jwt=")) {
      Harness h = new Harness();
      RequestSnapshot request = RequestSnapshot.builder("POST",
              URI.create("https://sms.example.com/send?" + query + PLANTED + "&to=123"))
          .body("{}".getBytes(StandardCharsets.UTF_8), "application/json").build();
      Operation op = Operation.builder("send-sms-" + n++, request).build();
      ScriptedTransport t = h.transport(op).then(status(200));
      try {
        h.executor.execute(op, t);
      } catch (IllegalArgumentException refused) {
        continue; // refused before anything was journaled: what the rule does for ?password=
      }
      String journaled = h.record(op).request().uri().toString();
      if (journaled.contains(PLANTED)) {
        leaked.add("query ?" + query + "... journaled as " + journaled);
      }
    }
    for (String header : List.of("X-JWT-Assertion", "X-Passwd", "X-Pwd")) {
      Harness h = new Harness();
      RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.com/v1/orders"))
          .header(header, PLANTED).body("{}".getBytes(StandardCharsets.UTF_8), "application/json").build();
      Operation op = Operation.builder("create-order", request).build();
      ScriptedTransport t = h.transport(op).then(status(200));
      h.executor.execute(op, t);
      if (h.record(op).request().header(header).isPresent()) {
        leaked.add("header " + header + " journaled with its value");
      }
    }
    assertEquals(List.of(), leaked, "credentials the default secret rule misses are journaled in clear");
  }
}
