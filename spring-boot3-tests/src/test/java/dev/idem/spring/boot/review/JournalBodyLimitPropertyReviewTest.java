package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Journal;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.client.IdempotentCall;
import dev.idem.testkit.IdempotentServer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.MediaType;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;
import org.sqlite.SQLiteDataSource;

/**
 * The starter's journal refuses a request body over 512 KiB at begin, while its client accepts up
 * to {@code idem.client.max-body-bytes} (1 MiB by default): a Spring app that posts a 600 KiB
 * keyed body is refused before anything is sent, and no property raises the journal's limit (the
 * only way was to declare a {@code JdbcJournal} bean of the app's own, rebuilding what the starter
 * builds). {@code idem.journal.max-request-body-bytes=716800} was ignored.
 *
 * <p>Expected: the property raises the journal's limit (up to the journal's ceiling, 700 KiB), and
 * a value the journal cannot take fails the startup, naming the property.
 */
class JournalBodyLimitPropertyReviewTest {
  private static final int BODY = 600 * 1024;

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
      .withBean(RestClient.Builder.class, RestClient::builder);

  @Test
  void withoutThePropertyA600KibBodyIsRefusedAtBeginAndNeverSent(@TempDir Path dir) {
    try (IdempotentServer server = IdempotentServer.start()) {
      runner.withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false").run(context -> {
        IdempotentCall call = IdempotentCall.named("upload");
        RestClientException e = assertThrows(RestClientException.class, () -> post(context.getBean(
            RestClient.Builder.class), server, call));
        assertTrue(messages(e).contains("more than the journal's limit of 524288 bytes"), messages(e));
        assertEquals(0, server.requestCount(), "a body the journal refused was sent");
        assertEquals(0, server.totalEffects());
        Journal journal = context.getBean(Journal.class);
        for (OperationState state : OperationState.values()) {
          assertEquals(0, journal.findByState(state, null, 10).size(), "journaled as " + state);
        }
      });
    }
  }

  @Test
  void thePropertyRaisesTheJournalsLimitSoA600KibBodyIsJournaledAndSentOnce(@TempDir Path dir) {
    try (IdempotentServer server = IdempotentServer.start()) {
      runner.withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false",
          "idem.journal.max-request-body-bytes=716800").run(context -> {
        assertNull(context.getStartupFailure());
        IdempotentCall call = IdempotentCall.named("upload");
        post(context.getBean(RestClient.Builder.class), server, call);

        String key = call.key().orElseThrow().value();
        assertEquals(1, server.requestCount(), "attempts: " + server.recordedRequests());
        assertEquals(1, server.effectCount(key), "effects for " + key);
        assertEquals(BODY, server.recordedRequests().get(0).body().length());
        Optional<OperationRecord> record = context.getBean(Journal.class).find(call.operationId().orElseThrow());
        assertTrue(record.isPresent(), "not journaled");
        assertEquals(OperationState.SUCCEEDED, record.get().state());
        assertEquals(BODY, record.get().request().bodyLength());
        assertEquals(1, record.get().attempts().size());
      });
    }
  }

  /** The same property reaches the journal in the app's DataSource (SQLite here, one instance). */
  @Test
  void thePropertyRaisesTheLimitOfAJournalInTheAppsDataSource(@TempDir Path dir) {
    try (IdempotentServer server = IdempotentServer.start()) {
      runner.withBean(DataSource.class, () -> {
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl("jdbc:sqlite:" + dir.resolve("app.db"));
        return ds;
      }).withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false", "idem.journal.store=datasource",
          "idem.journal.max-request-body-bytes=716800").run(context -> {
        assertNull(context.getStartupFailure());
        IdempotentCall call = IdempotentCall.named("upload");
        post(context.getBean(RestClient.Builder.class), server, call);

        assertEquals(1, server.effectCount(call.key().orElseThrow().value()));
        OperationRecord record = context.getBean(Journal.class).find(call.operationId().orElseThrow()).orElseThrow();
        assertEquals(OperationState.SUCCEEDED, record.state());
        assertEquals(BODY, record.request().bodyLength());
      });
    }
  }

  @Test
  void aLimitTheJournalCannotTakeFailsTheStartupNamingTheProperty(@TempDir Path dir) {
    for (String bad : new String[] {"0", "-1", "716801"}) {
      runner.withPropertyValues("idem.directory=" + dir, "idem.journal.max-request-body-bytes=" + bad).run(context -> {
        assertNotNull(context.getStartupFailure(), "idem.journal.max-request-body-bytes=" + bad + " started the app");
        String messages = messages(context.getStartupFailure());
        assertTrue(messages.contains("idem.journal.max-request-body-bytes"), messages);
      });
    }
  }

  private static void post(RestClient.Builder builder, IdempotentServer server, IdempotentCall call) {
    char[] body = new char[BODY];
    Arrays.fill(body, 'a');
    builder.build().post().uri(server.url("/uploads")).attributes(call).contentType(MediaType.TEXT_PLAIN)
        .body(new String(body)).retrieve().toBodilessEntity();
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
