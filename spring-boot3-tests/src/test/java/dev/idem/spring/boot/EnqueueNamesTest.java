package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.autoconfigure.OutboxCustomizer;
import dev.idem.spring.client.IdempotencyInterceptor;
import dev.idem.testkit.IdempotentServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.http.RequestEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;

/**
 * The interceptor's enqueue takes only the names the starter's outbox delivers: another name is
 * refused before it is journaled, saying how to register it; a name an OutboxCustomizer registers
 * is taken and delivered; and a PENDING operation of an undelivered name that a journal already
 * holds (an older version's enqueue) is named in one WARN at startup, not left to sit unseen.
 */
@ExtendWith(OutputCaptureExtension.class)
class EnqueueNamesTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class));

  @Test
  void anUndeliveredNameIsRefusedBeforeItIsJournaledNamingTheWayToRegisterIt(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.shutdown-timeout=0s").run(context -> {
      IdempotencyInterceptor idem = context.getBean(IdempotencyInterceptor.class);
      IdempotencyKey key = IdempotencyKey.generate();
      IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> idem.enqueue(
          "create-order", key, RequestEntity.post(URI.create("http://127.0.0.1:9/orders")).body("{}")));
      String m = refused.getMessage();
      assertTrue(m.contains("'create-order'") && m.contains("[untagged-patch, untagged-post]")
          && m.contains("idem.outbox.operations") && m.contains("OutboxCustomizer"), m);
      IdempotentExecutor executor = context.getBean(IdempotentExecutor.class);
      assertTrue(executor.find(new OperationId(OperationId.DEFAULT_SCOPE, "create-order", key)).isEmpty(),
          "nothing journaled");
      assertEquals(List.of(), executor.list(OperationState.PENDING, null, 10));
    });
  }

  @Test
  void aNameAnOutboxCustomizerRegistersIsTakenAndDelivered(@TempDir Path dir) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      IdempotencyKey key = IdempotencyKey.generate();
      runner.withPropertyValues("idem.directory=" + dir, "idem.shutdown-timeout=10s")
          .withUserConfiguration(RegistersCreateOrder.class)
          .run(context -> {
            IdempotencyInterceptor idem = context.getBean(IdempotencyInterceptor.class);
            idem.enqueue("create-order", key, RequestEntity.post(server.url("/orders"))
                .contentType(MediaType.APPLICATION_JSON).body("{\"item\":\"book\"}"));
          }); // closing drains the outbox
      assertEquals(1, server.effectCount(key.value()), "delivered once, under its key");
    }
  }

  /** Registers create-order with the interceptor's resume transport, as docs/spring.md shows. */
  @Configuration(proxyBeanMethods = false)
  static class RegistersCreateOrder {
    @Bean
    OutboxCustomizer createOrder(IdempotencyInterceptor idem) {
      return b -> b.register("create-order", idem.resumeTransport(new JdkClientHttpRequestFactory()));
    }
  }

  @Test
  void aPendingOperationOfAnUndeliveredNameLeftInTheJournalIsNamedAtStartup(@TempDir Path dir,
      CapturedOutput output) throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    OperationId id = new OperationId(OperationId.DEFAULT_SCOPE, "create-order", key);
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir.resolve("journal"));
        IdempotentExecutor older = IdempotentExecutor.builder().journal(journal).build()) {
      older.enqueue(Operation.builder("create-order", RequestSnapshot.builder("POST",
          URI.create("http://127.0.0.1:9/orders")).body("{}".getBytes(StandardCharsets.UTF_8), "application/json")
          .build()).key(key).build());
    }
    runner.withPropertyValues("idem.directory=" + dir, "idem.shutdown-timeout=0s").run(context -> {
      assertEquals(OperationState.PENDING,
          context.getBean(IdempotentExecutor.class).find(id).orElseThrow().state());
    });
    String log = output.getAll();
    assertTrue(log.contains("{create-order=1}") && log.contains("idem.outbox.operations"), log);
    assertEquals(1, log.split("PENDING operations of names no outbox has a transport for", -1).length - 1,
        "said once: " + log);
  }
}
