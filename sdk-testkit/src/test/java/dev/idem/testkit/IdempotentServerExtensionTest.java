package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.idem.testkit.TestClient.Answer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class IdempotentServerExtensionTest {
  @RegisterExtension
  final IdempotentServerExtension idem =
      new IdempotentServerExtension(() -> IdempotentServer.builder().keyHeader("X-Request-Key").start());

  private IdempotentServer fromBeforeEach;

  @BeforeEach
  void setUp(IdempotentServer server) {
    fromBeforeEach = server;
  }

  @AfterEach
  void tearDown(IdempotentServer server) throws Exception {
    // Still open here: the extension closes it after the @AfterEach methods.
    assertSame(fromBeforeEach, server);
    assertEquals(400, new TestClient().post(server.url("/orders"), "k", "{}").status());
  }

  @Test
  void injectsTheSameStartedServerEverywhere(IdempotentServer server) throws Exception {
    assertSame(idem.server(), server);
    assertSame(fromBeforeEach, server);

    // The factory's settings apply: the default key header name is not the key header here.
    Answer a = new TestClient().post(server.url("/orders"), "k", "{}");
    assertEquals(400, a.status());
    assertEquals(true, a.body().contains("X-Request-Key"), a.body());
  }
}
