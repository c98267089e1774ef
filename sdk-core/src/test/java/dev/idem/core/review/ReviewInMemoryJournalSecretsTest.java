package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.support.Harness;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review (secrets): {@link RequestSnapshot#DEFAULT_SECRET_HEADERS} says "Every journal also strips
 * these, even when the executor was told to allow them", and client.md says an allowed header
 * "never Authorization, Proxy-Authorization, Cookie, Set-Cookie". JdbcJournal does; the executor's
 * default journal, InMemoryJournal, strips nothing: with {@code allowHeaders("Authorization")} the
 * bearer token is kept in the journaled request, and a response's Set-Cookie in the stored outcome.
 */
class ReviewInMemoryJournalSecretsTest {
  @Test
  void theDefaultJournalStripsTheFourExactNamesEvenWhenTheExecutorAllowsThem() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowHeaders(Set.of("Authorization", "Cookie")));
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.com/v1/orders"))
        .header("Authorization", "Bearer qzPLANTbearer")
        .header("Cookie", "sid=qzPLANTcookie")
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
    Operation op = Operation.builder("create-order", request).build();
    h.executor.execute(op, h.transport(op).then(status(201, Map.of("Set-Cookie", "sid=qzPLANTsetcookie"))));
    OperationRecord r = h.journal.find(op.id()).orElseThrow();
    assertEquals(Set.of(), r.request().headers().keySet(),
        "the in-memory journal kept the request's Authorization/Cookie: " + r.request().headers());
    assertFalse(r.response().headers().containsKey("set-cookie"),
        "the in-memory journal kept the response's Set-Cookie: " + r.response().headers());
  }
}
