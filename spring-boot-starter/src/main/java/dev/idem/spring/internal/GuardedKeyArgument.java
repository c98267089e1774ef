package dev.idem.spring.internal;

import dev.idem.core.IdempotencyKey;
import dev.idem.server.Claim;
import org.springframework.core.MethodParameter;
import org.springframework.web.bind.support.WebDataBinderFactory;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.method.support.ModelAndViewContainer;

/**
 * Gives a handler parameter of type {@link IdempotencyKey} the key the guard admitted the request
 * under: read from the guard's claim, so it is the key the guard parsed, the same for the bare
 * ({@code abc-123}) and the quoted ({@code "abc-123"}, the IETF draft's spelling) header. A handler
 * that read the raw header and called {@code IdempotencyKey.of} on it threw on the quoted one the
 * guard had accepted, and answered 500 on every retry. Null when the request ran without a claim: a
 * request without a key on a handler with {@code keyRequired = false}, or a handler the guard does
 * not cover. Stateless and thread-safe.
 */
public final class GuardedKeyArgument implements HandlerMethodArgumentResolver {
  /** Makes the resolver; the starter registers it with Spring MVC, whether or not the guard is on. */
  public GuardedKeyArgument() {}

  @Override
  public boolean supportsParameter(MethodParameter parameter) {
    return parameter.getParameterType() == IdempotencyKey.class;
  }

  @Override
  public Object resolveArgument(MethodParameter parameter, ModelAndViewContainer mavContainer,
      NativeWebRequest webRequest, WebDataBinderFactory binderFactory) {
    Object claim = webRequest.getAttribute(Claim.ATTRIBUTE, RequestAttributes.SCOPE_REQUEST);
    // The guard stored the key unquoted and checked it with the same syntax IdempotencyKey.of checks.
    return claim instanceof Claim c ? IdempotencyKey.of(c.id().key()) : null;
  }
}
