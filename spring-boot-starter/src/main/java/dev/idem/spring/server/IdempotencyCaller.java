package dev.idem.spring.server;

import jakarta.servlet.http.HttpServletRequest;
import java.util.function.Function;

/**
 * Who is asking, for the guard's key scope: a key is unique per caller (and route or operation),
 * so two tenants that pick the same key each get their own operation. Declare one bean of this
 * type and the starter's guard filter takes its answer as the caller, instead of the user
 * principal's name; for an app that knows its tenants without Spring Security (an API-key check of
 * its own, a tenant header from its gateway):
 *
 * <pre>{@code
 * @Bean
 * IdempotencyCaller tenantOfApiKey(ApiKeys keys) {
 *   return request -> keys.tenantOf(request.getHeader("X-Api-Key")); // the tenant, never the key
 * }
 * }</pre>
 *
 * <p>It is the server module's caller function ({@code IdempotencyFilter(guard, caller)}) as a
 * type a bean can be found by. The guard filter runs before the dispatcher, and so before the
 * app's {@code HandlerInterceptor}s: it reads the request as it came, not what an interceptor
 * sets on it later. It is asked once per guarded request, on the request's thread; it must be
 * thread-safe. The caller is stored with each record: return an account or tenant id, never a
 * credential. A keyed request for which it returns null or a blank is refused 400
 * ({@code urn:idem:problem:idempotency-caller-missing}) before anything is claimed or run: such
 * requests would otherwise share one scope and be replayed each other's answers. Return a fixed
 * name (such as {@code "anonymous"}) for requests that are meant to share one. An exception it
 * throws fails the request, as a filter's does. Only one of this bean and
 * {@code idem.server.caller-header} may be set; both fail the startup.
 */
@FunctionalInterface
public interface IdempotencyCaller extends Function<HttpServletRequest, String> {
  /**
   * The caller of a guarded request.
   *
   * @param request the request, before its body is read
   * @return an account or tenant id; null or blank refuses a keyed request (400)
   */
  @Override
  String apply(HttpServletRequest request);
}
