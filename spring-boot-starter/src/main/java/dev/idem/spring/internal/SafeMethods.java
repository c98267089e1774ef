package dev.idem.spring.internal;

/**
 * The HTTP methods a controller class's {@code @Idempotent} leaves alone: GET, HEAD and OPTIONS
 * read, and are answered fresh (guarded with the class's writes, a keyed read would be answered a
 * stored copy for the retention). One rule for the guard, which reads a class's mark only for the
 * other methods ({@link GuardFilter}), and for the startup, which refuses a class mark none of
 * whose handlers takes another method ({@link IdempotentPlacement}): it would guard nothing. Apart
 * from {@link GuardFilter} so that the startup check, which also runs where the servlet API is
 * absent, does not load it.
 */
final class SafeMethods {
  private SafeMethods() {}

  /** @param method an HTTP method's name in upper case, such as "GET" */
  static boolean isSafe(String method) {
    return method.equals("GET") || method.equals("HEAD") || method.equals("OPTIONS");
  }
}
