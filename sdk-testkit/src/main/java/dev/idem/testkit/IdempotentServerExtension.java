package dev.idem.testkit;

import java.util.Objects;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit Jupiter extension that gives each test a fresh {@link IdempotentServer} and closes it
 * after the test, whatever the outcome. A fresh server per test keeps records, counters and fault
 * plans from leaking between tests.
 *
 * <p>Register it as a field, and either inject the server or ask the field for it:
 *
 * <pre>{@code
 * @RegisterExtension
 * final IdempotentServerExtension idem = new IdempotentServerExtension();
 *
 * @Test
 * void createsOneOrder(IdempotentServer server) {   // or: IdempotentServer server = idem.server();
 *   ...
 * }
 * }</pre>
 *
 * <p>It also works as {@code @ExtendWith(IdempotentServerExtension.class)}, with default settings,
 * through parameter injection. The server is started before any {@code @BeforeEach} method runs,
 * so those methods may take it as a parameter as well, and so may {@code @AfterEach} methods (it is
 * closed after them). There is no server per class: a test class constructor or a
 * {@code @BeforeAll} or {@code @AfterAll} method that asks for one is refused with a
 * {@link ParameterResolutionException} (a class-wide server would let records, counters and fault
 * plans leak between tests); for one server shared by a class, start it in {@code @BeforeAll} and
 * close it in {@code @AfterAll} yourself.
 *
 * <p>A failed assertion inside the server's {@link EffectHandler} fails the test: the client gets a
 * 500, and {@code afterEach} rethrows the handler's first {@link Error} when it closes the server
 * (see {@link IdempotentServer#close()}).
 *
 * <p>Thread-safety: parameter injection is safe under parallel test execution, because each test's
 * server lives in that test's extension context. {@link #server()} returns the server of the test
 * most recently started through this instance, so with a shared instance (a static field, or
 * {@code PER_CLASS} lifecycle) and concurrent test methods, use injection instead. If more than one
 * of these extensions is registered on a test, injection is ambiguous; use {@link #server()}.
 */
public final class IdempotentServerExtension implements BeforeEachCallback, AfterEachCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(IdempotentServerExtension.class);

  private final Supplier<IdempotentServer> factory;
  private volatile IdempotentServer current;

  /** Starts servers with the default settings. */
  public IdempotentServerExtension() {
    this(IdempotentServer::start);
  }

  /**
   * Starts servers with the given factory, called once per test, for example
   * {@code () -> IdempotentServer.builder().keyHeader("X-Request-Key").start()}.
   *
   * @param factory returns a new, started server on each call
   */
  public IdempotentServerExtension(Supplier<IdempotentServer> factory) {
    this.factory = Objects.requireNonNull(factory, "factory");
  }

  /**
   * The server of the running test.
   *
   * @return the server of the running test
   * @throws IllegalStateException outside a test (before {@code beforeEach} or after
   *     {@code afterEach})
   */
  public IdempotentServer server() {
    IdempotentServer s = current;
    if (s == null) {
      throw new IllegalStateException("no test is running with this extension");
    }
    return s;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    IdempotentServer server = Objects.requireNonNull(factory.get(), "the server factory returned null");
    context.getStore(NAMESPACE).put(this, server);
    current = server;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    IdempotentServer server = context.getStore(NAMESPACE).remove(this, IdempotentServer.class);
    current = null;
    if (server != null) {
      server.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    return parameterContext.getParameter().getType() == IdempotentServer.class;
  }

  /**
   * The running test's server.
   *
   * @throws ParameterResolutionException if no test is running with this extension: the parameter
   *     is one of a test class constructor, or of a {@code @BeforeAll} or {@code @AfterAll} method
   */
  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    IdempotentServer server = extensionContext.getStore(NAMESPACE).get(this, IdempotentServer.class);
    if (server == null) {
      // JUnit would pass a null on to the method, to fail later far from here.
      throw new ParameterResolutionException("No IdempotentServer for parameter " + parameterContext.getIndex()
          + " of " + parameterContext.getDeclaringExecutable() + ": " + getClass().getSimpleName()
          + " starts a fresh server for each test, so a server can be injected into @Test, @BeforeEach and"
          + " @AfterEach methods only, not into a test class constructor or a @BeforeAll or @AfterAll method."
          + " For one server shared by the whole class, start it yourself in @BeforeAll"
          + " (IdempotentServer.start()) and close it in @AfterAll.");
    }
    return server;
  }
}
