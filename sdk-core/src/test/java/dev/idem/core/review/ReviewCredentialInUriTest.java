package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Operation;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import org.junit.jupiter.api.Test;

/**
 * Review (secrets): SecretFilter.checkUri refuses a URI with user info or a secret-looking query
 * parameter because "the URI is journaled whole". Two ways around it put a credential in the
 * journal (and the CLI's {@code show}, which prints the URI) in clear.
 */
class ReviewCredentialInUriTest {

  /**
   * A host with an underscore (a docker-compose service name such as {@code payments_api}) makes
   * java.net.URI fall back to a registry-based authority: getRawUserInfo() is null although the
   * authority is {@code user:password@payments_api}. The user info check passes and the
   * password is journaled with the URI. OkHttp accepts such a host.
   */
  @Test
  void userInfoBeforeAHostWithAnUnderscoreIsNotJournaled() throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order",
        Requests.postJson("http://svc:qzPLANTpassword@payments_api:8080/v1/orders", "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(201));
    try {
      h.executor.execute(op, t);
    } catch (IllegalArgumentException refused) {
      assertTrue(h.journal.find(op.id()).isEmpty(), "refused, but journaled"); // refused like other user info
      return;
    }
    String journaled = h.journal.find(op.id()).orElseThrow().request().uri().toString();
    assertFalse(journaled.contains("qzPLANTpassword"),
        "the password in the URI's user info was journaled in clear: " + journaled);
  }

  /**
   * A fragment is never sent by an HTTP client, exactly like user info (the reason the user info
   * check gives), but it is journaled with the URI: an OAuth-style {@code #access_token=...}
   * reaches the journal, although {@code ?access_token=} would be refused.
   */
  @Test
  void aCredentialInTheFragmentIsNotJournaled() throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order",
        Requests.postJson("https://api.example.com/v1/orders#access_token=qzPLANTfragment", "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(201));
    try {
      h.executor.execute(op, t);
    } catch (IllegalArgumentException refused) {
      assertTrue(h.journal.find(op.id()).isEmpty(), "refused, but journaled");
      return;
    }
    String journaled = h.journal.find(op.id()).orElseThrow().request().uri().toString();
    assertFalse(journaled.contains("qzPLANTfragment"),
        "the access_token in the URI's fragment was journaled in clear: " + journaled);
  }
}
