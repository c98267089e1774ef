package dev.idem.testkit.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The test kit's extension, run by the oldest JUnit 5 the README claims (the module pins it): an
 * app on that JUnit must get a started server per test, injected, and closed after the test. The
 * first test proves that this JUnit really is the old one, so the pin cannot silently drift.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OldJUnitExtensionTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static IdempotentServer fromFirstTest;

  @RegisterExtension
  final IdempotentServerExtension idem = new IdempotentServerExtension();

  private IdempotentServer fromBeforeEach;

  @BeforeEach
  void setUp(IdempotentServer server) {
    fromBeforeEach = server;
  }

  @Test
  @Order(1)
  void runsOnTheClaimedJUnitAndInjectsOneStartedServer(IdempotentServer server) throws Exception {
    String expected = System.getProperty("idem.expected.junit");
    assertNotNull(expected, "surefire passes the pinned version");
    assertEquals(expected, Test.class.getPackage().getImplementationVersion(), "the JUnit on the class path");

    assertSame(idem.server(), server);
    assertSame(fromBeforeEach, server);
    assertEquals(201, post(server, "compat-key-1").statusCode());
    assertEquals(201, post(server, "compat-key-1").statusCode(), "the retry is replayed");
    assertEquals(1, server.effectCount("compat-key-1"), "one effect for two requests with one key");
    fromFirstTest = server;
  }

  @Test
  @Order(2)
  void eachTestGetsAFreshServerAndThePreviousOneIsClosed(IdempotentServer server) {
    assertNotNull(fromFirstTest, "the first test ran");
    assertTrue(server != fromFirstTest, "a new server per test");
    assertEquals(0, server.effectCount("compat-key-1"), "nothing leaks from the previous test");
    assertThrows(IOException.class, () -> post(fromFirstTest, "compat-key-2"), "the previous server is closed");
  }

  private static HttpResponse<String> post(IdempotentServer server, String key) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create(server.url("/orders").toString()))
        .header("Idempotency-Key", key)
        .header("Content-Type", "application/json")
        .timeout(Duration.ofSeconds(10))
        .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":1}"))
        .build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }
}
