package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.ScriptedTransport;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The executor judged a form body by the operation's name: an app's own operation named
 * {@code untagged-post} skipped the check, and its {@code password=} went to the journal in clear.
 * The name says nothing about who made the operation; the adapters decide before keying an
 * untagged call ({@link AdapterSupport#passesUntaggedUnjournaled}), and the executor refuses every
 * operation with such a body.
 */
class FormCredentialUnderUntaggedNameRefusedTest {
  private static final String SECRET = "planted-password-untagged-name";

  private static RequestSnapshot form(String body) {
    return RequestSnapshot.builder("POST", URI.create("https://auth.example.com/login"))
        .body(body.getBytes(StandardCharsets.UTF_8), "application/x-www-form-urlencoded").build();
  }

  @Test
  void anAppOperationNamedLikeAnUntaggedOneIsRefusedAsATaggedOneIs() throws Exception {
    for (String name : new String[] {"untagged-post", "untagged-patch"}) {
      Harness h = new Harness();
      Operation op = Operation.builder(name, form("user=ann&password=" + SECRET)).build();
      ScriptedTransport t = h.transport(op).then(status(200));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.executor.execute(op, t),
          name + ": a form body's password= is refused whatever the operation's name");
      assertTrue(e.getMessage().contains("'password'"), e.getMessage());
      assertFalse(e.getMessage().contains(SECRET), "the message names the field, never its value");
      assertEquals(0, t.count(), "nothing sent");
      assertTrue(h.journal.find(op.id()).isEmpty(), "nothing journaled");
    }
  }

  @Test
  void theAdapterRulePassesSuchABodyThroughAndKeysOneWithoutACredential() throws Exception {
    Harness h = new Harness();
    AdapterSupport support = AdapterSupport.of(h.executor, AdapterSupport.DEFAULT_KEY_HEADER,
        dev.idem.core.http.KeyHeaderFormat.BARE, dev.idem.core.http.UntaggedPolicy.FRESH_KEY);
    assertTrue(support.passesUntaggedUnjournaled("application/x-www-form-urlencoded",
        ("grant_type=password&password=" + SECRET).getBytes(StandardCharsets.UTF_8)));

    // A form body without a credential is keyed and journaled under the untagged name, as before.
    String name = support.untaggedOperationName("POST", "/orders").orElseThrow();
    RequestSnapshot plain = form("item=book&quantity=2");
    assertFalse(support.passesUntaggedUnjournaled("application/x-www-form-urlencoded", plain.body()));
    Operation op = Operation.builder(name, plain).build();
    ScriptedTransport t = h.transport(op).then(status(201));
    assertEquals(201, h.executor.execute(op, t).response().status());
    assertEquals(OperationState.SUCCEEDED, h.record(op).state());
    assertEquals(1, t.count());
    assertEquals("item=book&quantity=2", new String(h.record(op).request().body(), StandardCharsets.UTF_8));
  }
}
