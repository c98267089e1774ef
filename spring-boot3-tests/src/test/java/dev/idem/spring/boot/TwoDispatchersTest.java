package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemHealthAutoConfiguration;
import dev.idem.spring.client.IdempotencyInterceptor;
import dev.idem.spring.internal.IdemHealth;
import dev.idem.testkit.IdempotentServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.http.MediaType;
import org.springframework.http.RequestEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;

/**
 * An app with two OutboxDispatcher beans of its own and no {@code @Primary} (a slow partner given
 * a dispatcher of its own, its own maxInFlight): the context starts; enqueue takes the names of
 * either dispatcher and refuses one neither delivers, naming both dispatchers' names; the shutdown
 * drains both before the executor closes, so each queued operation is delivered once under its
 * key; the health report covers both; and the startup WARN names only what no dispatcher delivers.
 * Two dispatchers registering the same name fail the startup, naming the name and both beans.
 */
@ExtendWith(OutputCaptureExtension.class)
class TwoDispatchersTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
      IdemAutoConfiguration.class, IdemClientAutoConfiguration.class, IdemHealthAutoConfiguration.class));

  @Test
  void twoDispatcherBeansWithoutAPrimaryStartTakeEachOthersNamesAndBothDrain(@TempDir Path dir) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      IdempotencyKey a = IdempotencyKey.generate();
      IdempotencyKey b = IdempotencyKey.generate();
      runner.withPropertyValues("idem.directory=" + dir, "idem.shutdown-timeout=10s")
          .withUserConfiguration(TwoDispatchers.class)
          .run(context -> {
            assertNull(context.getStartupFailure());
            IdempotencyInterceptor idem = context.getBean(IdempotencyInterceptor.class);
            idem.enqueue("partner-a", a, RequestEntity.post(server.url("/a"))
                .contentType(MediaType.APPLICATION_JSON).body("{}"));
            idem.enqueue("partner-b", b, RequestEntity.post(server.url("/b"))
                .contentType(MediaType.APPLICATION_JSON).body("{}"));
            IdempotencyKey other = IdempotencyKey.generate();
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> idem.enqueue(
                "create-order", other, RequestEntity.post(server.url("/orders")).body("{}")));
            assertTrue(refused.getMessage().contains("[partner-a, partner-b]"), refused.getMessage());
            assertTrue(context.getBean(IdempotentExecutor.class)
                .find(new OperationId(OperationId.DEFAULT_SCOPE, "create-order", other)).isEmpty(), "nothing journaled");
            IdemHealth.Report report = context.getBean(IdemHealth.class).check();
            Map<?, ?> outboxes = (Map<?, ?>) report.details().get("outbox");
            assertNotNull(outboxes, "the outboxes reported: " + report.details());
            assertEquals(false, outboxes.get("offline"), report.details().toString());
          }); // closing drains both outboxes, then closes the executor
      assertEquals(1, server.effectCount(a.value()), "partner-a delivered once, under its key");
      assertEquals(1, server.effectCount(b.value()), "partner-b delivered once, under its key");
    }
  }

  @Test
  void theStartupWarnNamesOnlyWhatNoDispatcherDelivers(@TempDir Path dir, CapturedOutput output) throws Exception {
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir.resolve("journal"));
        IdempotentExecutor older = IdempotentExecutor.builder().journal(journal).build()) {
      for (String name : new String[] {"partner-b", "create-order"}) {
        older.enqueue(Operation.builder(name, RequestSnapshot.builder("POST", URI.create("http://127.0.0.1:9/x"))
            .body("{}".getBytes(StandardCharsets.UTF_8), "application/json").build())
            .key(IdempotencyKey.generate()).build());
      }
    }
    runner.withPropertyValues("idem.directory=" + dir, "idem.shutdown-timeout=0s")
        .withUserConfiguration(TwoDispatchersOnePrimary.class) // the primary one delivers partner-a only
        .run(context -> assertNull(context.getStartupFailure()));
    String log = output.getAll();
    assertTrue(log.contains("{create-order=1}"), log);
    assertFalse(log.contains("partner-b=1"), "partner-b is the second dispatcher's: " + log);
  }

  /**
   * Both would deliver partner-a, and which transport (with its client's settings, base URL and
   * auth) sent a queued operation would depend on which claimed it first. The startup is refused
   * before either starts: the queued operation is not sent and stays PENDING, for the app fixed.
   */
  @Test
  void twoDispatchersRegisteringOneNameFailTheStartupNamingTheNameAndBothBeans(@TempDir Path dir) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      IdempotencyKey key = IdempotencyKey.generate();
      OperationId id = new OperationId(OperationId.DEFAULT_SCOPE, "partner-a", key);
      try (JdbcJournal journal = JdbcJournal.openEmbedded(dir.resolve("journal"));
          IdempotentExecutor older = IdempotentExecutor.builder().journal(journal).build()) {
        older.enqueue(Operation.builder("partner-a", RequestSnapshot.builder("POST", server.url("/a"))
            .body("{}".getBytes(StandardCharsets.UTF_8), "application/json").build()).key(key).build());
      }
      runner.withPropertyValues("idem.directory=" + dir, "idem.shutdown-timeout=0s")
          .withUserConfiguration(TwoDispatchersOneName.class)
          .run(context -> {
            Throwable failure = context.getStartupFailure();
            assertNotNull(failure, "two dispatchers deliver partner-a");
            Throwable root = failure;
            while (root.getCause() != null) {
              root = root.getCause();
            }
            String message = root.getMessage();
            assertTrue(root instanceof IllegalStateException, root.toString());
            assertTrue(message.contains("'partner-a'"), message);
            assertTrue(message.contains("'partnerA'") && message.contains("'partnerAOther'"), message);
            assertTrue(message.contains("one OutboxDispatcher bean only"), message);
            assertFalse(message.contains("partner-b"), "partner-b is one dispatcher's: " + message);
          });
      assertEquals(0, server.requestCount(), "neither dispatcher started");
      try (JdbcJournal journal = JdbcJournal.openEmbedded(dir.resolve("journal"));
          IdempotentExecutor after = IdempotentExecutor.builder().journal(journal).build()) {
        assertEquals(OperationState.PENDING, after.find(id).orElseThrow().state(), "still queued");
      }
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class TwoDispatchers {
    @Bean(destroyMethod = "close")
    OutboxDispatcher partnerA(IdempotentExecutor executor, IdempotencyInterceptor idem) {
      return OutboxDispatcher.builder(executor)
          .register("partner-a", idem.resumeTransport(new JdkClientHttpRequestFactory())).build();
    }

    @Bean(destroyMethod = "close")
    OutboxDispatcher partnerB(IdempotentExecutor executor, IdempotencyInterceptor idem) {
      return OutboxDispatcher.builder(executor).maxInFlight(2)
          .register("partner-b", idem.resumeTransport(new JdkClientHttpRequestFactory())).build();
    }
  }

  /** The same two, partner-a's marked {@code @Primary}, as apps had to before. */
  @Configuration(proxyBeanMethods = false)
  static class TwoDispatchersOnePrimary {
    @Bean(destroyMethod = "close")
    @Primary
    OutboxDispatcher partnerA(IdempotentExecutor executor, IdempotencyInterceptor idem) {
      return new TwoDispatchers().partnerA(executor, idem);
    }

    @Bean(destroyMethod = "close")
    OutboxDispatcher partnerB(IdempotentExecutor executor, IdempotencyInterceptor idem) {
      return new TwoDispatchers().partnerB(executor, idem);
    }
  }

  /** partner-a on two beans: the second one also delivers partner-b. */
  @Configuration(proxyBeanMethods = false)
  static class TwoDispatchersOneName {
    @Bean(destroyMethod = "close")
    OutboxDispatcher partnerA(IdempotentExecutor executor, IdempotencyInterceptor idem) {
      return new TwoDispatchers().partnerA(executor, idem);
    }

    @Bean(destroyMethod = "close")
    OutboxDispatcher partnerAOther(IdempotentExecutor executor, IdempotencyInterceptor idem) {
      return OutboxDispatcher.builder(executor).maxInFlight(2)
          .register("partner-a", idem.resumeTransport(new JdkClientHttpRequestFactory()))
          .register("partner-b", idem.resumeTransport(new JdkClientHttpRequestFactory())).build();
    }
  }
}
