/**
 * The server half in a Spring MVC app: {@link dev.idem.spring.server.Idempotent} marks the handlers
 * the starter's guard filter guards (besides the routes named in {@code idem.server.routes});
 * an {@link dev.idem.spring.server.IdempotencyCaller} bean tells it who is asking, for key scope.
 */
package dev.idem.spring.server;
