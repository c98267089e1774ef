package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Review rsecrets: two public records of the server module print credentials in their generated
 * {@code toString()}, where every other snapshot of a request or response in the project keeps
 * them out ({@code RequestSnapshot}: method, redacted URI, body size; {@code ResponseSnapshot}:
 * status, body size; {@link GuardResponse}: status, header names, body size):
 * <ul>
 *   <li>{@link CapturedResponse} ("every response header the handler set"): every header value,
 *       so a handler's {@code Set-Cookie} session or the {@code X-Auth-Token} a login answers with;
 *   <li>{@link GuardRequest}: the raw query in clear ({@code ?access_token=...}, {@code ?api_key=}
 *       on an incoming request), though its own Javadoc says credential path parameters are
 *       removed so that they are "never stored or logged".
 * </ul>
 * Apps and adapters print these (a {@code TransactionalHandler} or a custom adapter that logs what
 * it handles, a debugger, a test log), and so would any log line or exception message of Idem's
 * that ever names one.
 */
class RvRsecretsServerRecordsToStringTest {
  private static final String SESSION = "RvRsecretsSessionCookie0123456789";
  private static final String TOKEN = "RvRsecretsAuthToken0123456789";

  @Test
  void toStringShowsNoCredential() {
    List<String> leaks = new ArrayList<>();
    CapturedResponse r = new CapturedResponse(201,
        Map.of("Set-Cookie", List.of("SESSION=" + SESSION + "; HttpOnly"), "X-Auth-Token", List.of(TOKEN),
            "Content-Type", List.of("application/json")),
        "{\"order\":1}".getBytes(StandardCharsets.UTF_8));
    if (r.toString().contains(SESSION) || r.toString().contains(TOKEN)) {
      leaks.add("CapturedResponse.toString() = " + r);
    }
    GuardRequest g = new GuardRequest("POST", "/orders", "access_token=" + TOKEN + "&page=1", "application/json",
        List.of("k-1"), "acme", limit -> new byte[0], null);
    if (g.toString().contains(TOKEN)) {
      leaks.add("GuardRequest.toString() = " + g);
    }
    assertEquals(List.of(), leaks, "toString() prints a credential");
  }
}
