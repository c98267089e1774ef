package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A failed assertion inside a test's handler fails the test through the extension: afterEach
 * closes the server, which rethrows the handler's Error (the client only saw a 500).
 */
class IdempotentServerExtensionHandlerErrorTest {
  @Test
  void afterEachRethrowsTheFirstErrorAHandlerThrew() throws Exception {
    AssertionError inHandler = new AssertionError("expected qty 2");
    IdempotentServerExtension extension = new IdempotentServerExtension(() -> IdempotentServer.builder()
        .handler(request -> {
          throw inHandler;
        }).start());
    ExtensionContext context = contextWithAStore();

    extension.beforeEach(context);
    IdempotentServer server = extension.server();
    assertEquals(500, new TestClient().post(server.url("/orders"), "k-1", "{}").status());
    assertEquals(500, new TestClient().post(server.url("/orders"), "k-2", "{}").status());

    AssertionError reported = assertThrows(AssertionError.class, () -> extension.afterEach(context));
    assertSame(inHandler, reported, "the handler's own Error, with its message and stack");
    assertThrows(IllegalStateException.class, extension::server, "the test's server is gone all the same");
  }

  /** An extension context whose store is a plain map: all that beforeEach and afterEach use. */
  private static ExtensionContext contextWithAStore() {
    Map<Object, Object> values = new HashMap<>();
    ExtensionContext.Store store = (ExtensionContext.Store) Proxy.newProxyInstance(
        ExtensionContext.Store.class.getClassLoader(), new Class<?>[] {ExtensionContext.Store.class},
        (p, m, a) -> switch (m.getName()) {
          case "put" -> values.put(a[0], a[1]);
          case "remove" -> ((Class<?>) a[1]).cast(values.remove(a[0]));
          case "get" -> a.length == 2 ? ((Class<?>) a[1]).cast(values.get(a[0])) : values.get(a[0]);
          default -> throw new UnsupportedOperationException(m.getName());
        });
    return (ExtensionContext) Proxy.newProxyInstance(ExtensionContext.class.getClassLoader(),
        new Class<?>[] {ExtensionContext.class}, (p, m, a) -> switch (m.getName()) {
          case "getStore" -> store;
          default -> throw new UnsupportedOperationException(m.getName());
        });
  }
}
