package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.support.Harness;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A keyed call's form body is read for credentials by exact field names, not by the query's
 * substring rule: a payment API's form body (Stripe's is form-encoded) names its fields freely,
 * and a create-payment call with {@code metadata[author]=} ("auth") or {@code metadata[session_id]=}
 * ("session") was refused on every attempt, its order never sent.
 */
class FormFieldNamesTest {
  private static RequestSnapshot form(String body) {
    return RequestSnapshot.builder("POST", URI.create("https://api.stripe.example/v1/payment_intents"))
        .body(body.getBytes(StandardCharsets.UTF_8), "application/x-www-form-urlencoded").build();
  }

  @Test
  void aPaymentFormWithFreelyNamedFieldsIsSentAndJournaledOnce() throws Exception {
    Harness h = new Harness();
    String body = "amount=4200&currency=eur&metadata%5Bauthor%5D=tolkien&metadata%5Bsession_id%5D=s_1"
        + "&account_token=ct_1&payment_method_options%5Bcard%5D%5Brequest_three_d_secure%5D=any";
    Operation op = Operation.builder("create-payment", form(body)).build();

    dev.idem.core.support.ScriptedTransport t = h.transport(op).then(status(200));
    h.executor.execute(op, t);

    assertEquals(OperationState.SUCCEEDED, h.record(op).state());
    assertEquals(1, t.count(), "sent once");
    assertEquals(body, new String(h.record(op).request().body(), StandardCharsets.UTF_8), "journaled whole");
  }

  @Test
  void aFieldWhoseExactNameHoldsACredentialIsStillRefused() {
    for (String field : new String[] {"client_secret", "password", "refresh_token", "client_assertion", "pwd"}) {
      Harness h = new Harness();
      Operation op = Operation.builder("token", form("grant_type=x&" + field + "=planted")).build();
      dev.idem.core.support.ScriptedTransport t = h.transport(op);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.executor.execute(op, t),
          field);
      assertTrue(e.getMessage().contains("'" + field + "'") && !e.getMessage().contains("planted"), e.getMessage());
      assertEquals(0, t.count(), field + ": nothing sent");
    }
  }
}
