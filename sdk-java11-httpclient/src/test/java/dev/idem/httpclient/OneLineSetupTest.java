package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationState;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Issue 14, "Why": the first call needed five types; now a journal and one line. */
class OneLineSetupTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  void firstCallNeedsAJournalAndOneLineOfSetup() throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    IdempotentHttpClient client = IdempotentHttpClient.create(Fixture.JDK, journal);

    OperationCall call = client.operation("create-order");
    HttpResponse<String> r = call.send(Fixture.post(serverExtension.server().url("/orders"), "{}"),
        BodyHandlers.ofString());
    assertEquals(201, r.statusCode());
    assertEquals(1, serverExtension.server().effectCount(call.key().value()));
    assertEquals(Optional.of(call.key().value()), serverExtension.server().recordedRequests().get(0).keyHeader());
    assertEquals(OperationState.SUCCEEDED, journal.find(call.operationId()).orElseThrow().state());
    assertSame(journal, client.idempotentExecutor().journal(), "the executor was built inside, over the journal");
    assertSame(journal, IdempotentHttpClient.create(journal).idempotentExecutor().journal());
    assertThrows(NullPointerException.class, () -> IdempotentHttpClient.create(null));
  }
}
