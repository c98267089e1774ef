package dev.idem.spring.internal;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Tells a transactional run that its handler threw even though Spring MVC answered the exception
 * (an {@code @ExceptionHandler}, {@code @ControllerAdvice}, {@code ResponseStatusException},
 * {@code @ResponseStatus} on the exception): the filter then sees an ordinary response, and would
 * commit the handler's half-done write with it. Registered as the first resolver, it resolves
 * nothing: it notes the exception on a request that a transactional run watches and lets the
 * app's resolvers answer. {@link DispatcherServlet#EXCEPTION_ATTRIBUTE} alone is not enough: the
 * dispatcher sets it only for an answer without a view, and this resolver is not consulted when
 * the app turned off {@code detectAllHandlerExceptionResolvers}, so both are read. Thread-safe.
 */
public final class HandlerFailures implements HandlerExceptionResolver, Ordered {
  private static final String WATCHED = HandlerFailures.class.getName() + ".WATCHED";
  private static final String THROWN = HandlerFailures.class.getName() + ".THROWN";

  /** Makes the resolver; the server auto-configuration registers it. */
  public HandlerFailures() {}

  @Override
  public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
      Exception ex) {
    if (request.getAttribute(WATCHED) != null) {
      request.setAttribute(THROWN, ex);
    }
    return null;
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE;
  }

  /** Starts noting, on this request, an exception its handler throws. */
  static void watch(HttpServletRequest request) {
    request.setAttribute(WATCHED, Boolean.TRUE);
  }

  /** The exception the handler threw and Spring MVC answered, or null. */
  static Throwable thrown(HttpServletRequest request) {
    Object noted = request.getAttribute(THROWN);
    if (noted == null) {
      noted = request.getAttribute(DispatcherServlet.EXCEPTION_ATTRIBUTE);
    }
    return noted instanceof Throwable t ? t : null;
  }
}
