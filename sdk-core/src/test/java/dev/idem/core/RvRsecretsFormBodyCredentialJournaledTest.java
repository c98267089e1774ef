package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.support.Harness;
import dev.idem.core.support.ScriptedTransport;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Review rsecrets: a credential in an {@code application/x-www-form-urlencoded} body is journaled
 * in clear, while the very same {@code name=value} pair in the query string is refused. An OAuth
 * token request ({@code grant_type=client_credentials&client_id=...&client_secret=...}, or the
 * password grant's {@code password=}) or a form login is such a POST. With the Spring starter's
 * default {@code idem.client.untagged-policy=fresh-key}, every POST an app makes through Boot's
 * RestClient/RestTemplate/WebClient builders is journaled this way without being tagged, so the
 * app's own token calls put their client secret (and, in the stored outcome, the access and
 * refresh tokens the server answers) into the journal, readable by whoever reads the journal's
 * file or table, for as long as it keeps the operation; {@code idem journal show} does not print
 * bodies, but the file holds them.
 *
 * <p>docs/client.md, "Secrets stay out of the journal": "The journal holds what is needed to send a
 * request again, never a credential", and credentials in the query are refused rather than
 * redacted because "the URI is part of the request's identity and is journaled ... whole". A form
 * body is a query string by grammar and is journaled whole for the same reason; nothing in the
 * docs says bodies are exempt. Refusing such a body (naming the field, with an allow option, as
 * for the query) would pass, as would any rule that keeps the value out of the journal.
 */
class RvRsecretsFormBodyCredentialJournaledTest {
  private static final String SECRET = "planted-client-secret-rvrsecrets";

  @Test
  void aClientSecretInAFormBodyIsNotJournaledInClear() throws Exception {
    // The same pair in the query is refused before anything is journaled or sent.
    Harness q = new Harness();
    RequestSnapshot inQuery = RequestSnapshot.builder("POST",
        URI.create("https://auth.example.com/oauth/token?client_secret=" + SECRET)).build();
    Operation queryOp = Operation.builder("token", inQuery).build();
    assertThrows(IllegalArgumentException.class, () -> q.executor.execute(queryOp, q.transport(queryOp)));

    Harness h = new Harness();
    RequestSnapshot inBody = RequestSnapshot.builder("POST", URI.create("https://auth.example.com/oauth/token"))
        .body(("grant_type=client_credentials&client_id=orders-service&client_secret=" + SECRET)
            .getBytes(StandardCharsets.UTF_8), "application/x-www-form-urlencoded")
        .build();
    Operation op = Operation.builder("token", inBody).build();
    ScriptedTransport t = h.transport(op).then(status(200));
    try {
      h.executor.execute(op, t);
    } catch (IllegalArgumentException refused) {
      return; // refused as the query's pair is: nothing journaled
    }
    String journaled = new String(h.record(op).request().body(), StandardCharsets.UTF_8);
    assertFalse(journaled.contains(SECRET),
        "the form body's client_secret is journaled in clear (the same pair in the query is refused): " + journaled);
  }
}
