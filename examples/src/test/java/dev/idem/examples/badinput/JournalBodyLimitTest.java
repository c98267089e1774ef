package dev.idem.examples.badinput;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import dev.idem.testkit.IdempotentServer;
import java.nio.file.Path;
import java.util.Arrays;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's OkHttp quickstart (an embedded journal, {@code IdemOkHttp.create}) with a 600 KiB
 * body: the client accepts bodies up to 1 MiB ({@code maxBodyBytes}), the journal up to 512 KiB,
 * so the journal refuses it at begin and nothing is sent. The refusal is the first the user hears
 * of a second limit: it must say which limit it is, in units a reader compares at a glance, and how
 * to raise it (the quickstart's {@code openEmbedded} takes no options), up to what, and that the
 * client's own limit is not the one in play. Before, it said "the journal's limit of 524288
 * (maxRequestBodyBytes)", naming no class to set it on.
 */
class JournalBodyLimitTest {
  @Test
  void aBodyWithinTheClientsLimitButOverTheJournalsIsRefusedSayingHowToRaiseIt(@TempDir Path dir) throws Exception {
    try (IdempotentServer server = IdempotentServer.start();
        JdbcJournal journal = JdbcJournal.openEmbedded(dir);
        IdemOkHttp idem = IdemOkHttp.create(journal)) {
      OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();
      byte[] body = new byte[600 * 1024];
      Arrays.fill(body, (byte) ' ');
      Request order = new Request.Builder().url(server.url("/orders").toString())
          .post(RequestBody.create(body, MediaType.get("application/json")))
          .tag(IdempotentOperation.class, IdempotentOperation.of("create-order")).build();

      JournalException e = assertThrows(JournalException.class, () -> client.newCall(order).execute().close());
      String m = e.getMessage();
      assertTrue(m.contains("614400 bytes (600 KiB)") && m.contains("524288 bytes (512 KiB)"), m);
      assertTrue(m.contains("JdbcJournal.embedded(dir).maxRequestBodyBytes(") && m.contains("716800"), m);
      assertTrue(m.contains("maxBodyBytes"), "says the client's limit is another one: " + m);
      assertEquals(0, server.requestCount(), "nothing may be sent");
      for (OperationState s : OperationState.values()) {
        assertEquals(0, journal.count(s), "nothing may be journaled, yet " + s + " has records");
      }
    }
  }
}
