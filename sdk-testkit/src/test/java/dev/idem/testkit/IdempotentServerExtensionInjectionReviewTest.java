package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.lang.reflect.Parameter;
import java.lang.reflect.Proxy;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.Test;

/**
 * Review: {@link IdempotentServerExtension#supportsParameter} says yes to every
 * {@code IdempotentServer} parameter, wherever it is, and {@link IdempotentServerExtension#resolveParameter}
 * then reads the store, which holds a server only between {@code beforeEach} and {@code afterEach}.
 * A test class constructor or a {@code @BeforeAll} method that asks for the server (the natural
 * first try with {@code @TestInstance(PER_CLASS)}) is given {@code null}: no error at resolution,
 * and a NullPointerException later, far from the cause. JUnit accepts a null from a resolver for a
 * reference type, so it passes it on. It should refuse with a ParameterResolutionException that
 * says the server exists per test only.
 */
class IdempotentServerExtensionInjectionReviewTest {
  @SuppressWarnings("unused")
  static void beforeAll(IdempotentServer server) {}

  @Test
  void aParameterOutsideATestIsRefusedNotResolvedToNull() throws Exception {
    IdempotentServerExtension extension = new IdempotentServerExtension();
    Parameter parameter = getClass().getDeclaredMethod("beforeAll", IdempotentServer.class).getParameters()[0];
    ParameterContext parameterContext = proxy(ParameterContext.class, (name, args) -> switch (name) {
      case "getParameter" -> parameter;
      case "getIndex" -> 0;
      case "getDeclaringExecutable" -> parameter.getDeclaringExecutable();
      default -> throw new UnsupportedOperationException(name);
    });
    // The class-level context of a @BeforeAll method or a constructor: beforeEach has not run, so
    // the store holds no server.
    ExtensionContext.Store emptyStore = proxy(ExtensionContext.Store.class, (name, args) -> null);
    ExtensionContext classContext = proxy(ExtensionContext.class, (name, args) -> switch (name) {
      case "getStore" -> emptyStore;
      case "getUniqueId" -> "[engine:junit-jupiter]/[class:Example]";
      default -> throw new UnsupportedOperationException(name);
    });

    if (!extension.supportsParameter(parameterContext, classContext)) {
      return; // not offered: JUnit says no resolver was found, which is clear enough
    }
    Object resolved;
    try {
      resolved = extension.resolveParameter(parameterContext, classContext);
    } catch (ParameterResolutionException refused) {
      return; // refused with a message: fine
    }
    assertNotNull(resolved, "a @BeforeAll method or a test class constructor that takes an IdempotentServer is"
        + " silently given null (the server exists only between beforeEach and afterEach)");
  }

  @FunctionalInterface
  private interface Answer {
    Object answer(String method, Object[] args);
  }

  private static <T> T proxy(Class<T> type, Answer answer) {
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (p, m, a) -> {
      if (m.getDeclaringClass() == Object.class) {
        return switch (m.getName()) {
          case "hashCode" -> System.identityHashCode(p);
          case "equals" -> p == a[0];
          default -> type.getSimpleName() + " proxy";
        };
      }
      return answer.answer(m.getName(), a);
    }));
  }
}
