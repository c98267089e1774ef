package dev.idem.spring.server;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Guards a Spring MVC handler with Idem's idempotency guard: a request with an
 * {@code Idempotency-Key} runs the handler at most once per key, a repeat gets the stored result
 * (marked {@code Idempotent-Replayed: true}), a key reused with another payload is refused, and a
 * POST or PATCH without a key is answered 400 (unless {@link #keyRequired()} is false). A request
 * without a key of any other method (GET included: a GET handler marked itself is guarded, as a
 * GET route is), or to a handler whose key is not required, runs unguarded, its body not read by the guard,
 * in lease and transactional mode alike.
 *
 * <pre>{@code
 * @PostMapping("/orders")
 * @Idempotent(transactional = true)
 * Order create(@RequestBody OrderDraft draft) { return orders.insert(draft); }
 * }</pre>
 *
 * <p>A handler that needs the request's key (to pass it on as the key of a call it makes) takes a
 * parameter of type {@link dev.idem.core.IdempotencyKey}: the starter gives it the key the guard
 * admitted the request under, the same whether the client sent it bare ({@code abc-123}) or as the
 * IETF draft's quoted string ({@code "abc-123"}); it is null for a request that ran without a key
 * ({@link #keyRequired()} false). Reading the header with {@code @RequestHeader} instead gives the
 * quotes too, which {@code IdempotencyKey.of} refuses.
 *
 * <pre>{@code
 * @PostMapping("/orders")
 * @Idempotent
 * String order(IdempotencyKey key, @RequestBody String order) {
 *   return payments.post().uri("/charges").attributes(IdempotentCall.named("charge").withKey(key))
 *       .body(order).retrieve().body(String.class);
 * }
 * }</pre>
 *
 * <p>On a class it applies to every handler method of the class, for requests of the unsafe
 * methods only (POST, PUT, PATCH, DELETE): the class's GET, HEAD and OPTIONS requests run
 * unguarded, key or not, and store nothing, so that a read is answered fresh rather than a stored
 * copy. A handler's own mark (a GET handler that makes an effect) guards it for every method it
 * takes, GET included; it takes precedence over the class's. A class mark none of whose handlers
 * may take an unsafe method (each mapped to GET, HEAD or OPTIONS only) would guard nothing, so it
 * fails the startup with an {@link IllegalStateException} naming the class (a mark inherited from a
 * base class or carried through a stereotype is kept while some controller carrying it takes an
 * unsafe method); a mapping that names no method takes every method, POST included. The starter reads it at request
 * time through the handler mappings, before the body is read; routes can also be named in
 * {@code idem.server.routes} without an annotation. Unset attributes take the
 * {@code idem.server.*} defaults.
 *
 * <p>It works only there: on a Spring MVC handler method ({@code @RequestMapping},
 * {@code @PostMapping}... on a {@code @Controller}), or on a controller class, for its handler
 * methods. It is not AOP advice: on a {@code @Service} or {@code @Component} method, a JAX-RS
 * (Jersey) resource, a functional endpoint's handler or a class without a handler method nothing
 * would read it, so such a bean fails the startup with an {@link IllegalStateException} naming the
 * class and method (unless {@code idem.server.enabled=false}, which turns the guard off on purpose).
 * Guard a functional endpoint with {@code idem.server.routes}, and an endpoint Spring MVC does not
 * serve with the server module's {@code IdempotencyFilter}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface Idempotent {
  /**
   * The operation name. Empty (the default): a key is unique per caller and route (method and
   * path, as the request spelled it). Named: a key is unique per caller and operation, whatever
   * the path (the fingerprint still covers method, path, query and body, so the same key on
   * another path is refused as a reuse).
   *
   * @return the operation name, or empty
   */
  String operation() default "";

  /**
   * How long the result is kept and replayed, in Spring Boot's duration syntax ({@code 48h},
   * {@code PT48H}); empty for {@code idem.server.retention} (24 hours by default).
   *
   * @return the retention, or empty
   */
  String retention() default "";

  /**
   * The status for a key reused with another payload; 0 for {@code idem.server.mismatch-status}
   * (422 by default, as the IETF draft says; some APIs answer 409 or 417).
   *
   * @return a 4xx status, or 0
   */
  int mismatchStatus() default 0;

  /**
   * Whether a request without a key is refused with 400 (true, the default) or runs unguarded.
   *
   * @return true to require a key
   */
  boolean keyRequired() default true;

  /**
   * Transactional mode: the claim, the handler's writes on the app's DataSource (through
   * {@code JdbcTemplate}, JPA or anything that joins Spring's transaction) and the stored result
   * commit in one transaction, so that a crash leaves all of them or none. Needs
   * {@code idem.server.store=datasource} and a transaction manager on that DataSource. A repeat
   * waits on the database's lock, then gets the replay.
   *
   * @return true for transactional mode
   */
  boolean transactional() default false;
}
