package dev.idem.testkit;

/**
 * The business action behind the server: creating an order, charging a card. The server calls it
 * at most once per operation identity (caller, method and path, key) and stores what it returns;
 * every call counts as one effect.
 *
 * <p>Implementations must be thread-safe: requests with different keys run concurrently.
 *
 * <p>If the handler throws, the effect still counts (the action may have got part-way, which is
 * exactly the case a test wants to see), no result is stored, and the client gets a 500; a retry
 * with the same key runs the handler again. This holds for an {@link Error} too, such as the
 * {@link AssertionError} of a JUnit assertion inside the handler; in addition, the first Error a
 * handler threw is rethrown by {@link IdempotentServer#close()} (so by
 * {@link IdempotentServerExtension} after each test), and the test fails with its message. A
 * {@link VirtualMachineError} such as {@link OutOfMemoryError} is not caught.
 */
@FunctionalInterface
public interface EffectHandler {
  /**
   * Runs the action once.
   *
   * @param request what to do
   * @return the reply to send; any status 200..599. 2xx, 3xx and 4xx replies are stored and
   *     replayed (a declined payment stays declined). A 5xx reply is sent but not stored (unless the server was built with {@link IdempotentServer.Builder#storeServerErrors}), as if
   *     the handler had thrown: it says the action did not finish, so a retry runs it again.
   */
  Reply execute(EffectRequest request);
}
