package dev.idem.spring.internal;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.CorsConfigurationSource;
import org.springframework.web.cors.CorsUtils;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.handler.AbstractHandlerMapping;

/**
 * Spring MVC's CORS rules for a guarded request, applied before the guard answers it. Spring MVC
 * applies a handler's {@code @CrossOrigin} and the app's global CORS mappings inside the
 * DispatcherServlet, that is behind the guard's filter: the handler's first answer carried
 * {@code Access-Control-Allow-Origin}, and the guard's own answers (a replay, 409 while in
 * flight, 422 for a reused key) did not, so a browser front end that retried a timed-out order
 * with its key could never read the order it placed (fetch() reports it as a network failure), and
 * its user submitted again under a new key. The guard stores no CORS header (they depend on the
 * request's {@code Origin}); the headers are set on the response here, as Spring's own
 * {@code CorsFilter} sets them ahead of the chain, and the DispatcherServlet's CORS step then
 * leaves a response that has them alone. A request from an origin the handler does not allow is
 * refused here (403, as Spring MVC refuses it) before anything is claimed. Stateless.
 */
final class GuardCors {
  private GuardCors() {}

  /**
   * Applies the CORS configuration the handler mapping found for the request, if any.
   *
   * @param mapping the mapping that returned {@code chain}
   * @param chain the request's handler chain from that mapping
   * @return false if the request was refused (403 sent); true otherwise
   * @throws IOException if writing the refusal fails
   */
  static boolean apply(AbstractHandlerMapping mapping, HandlerExecutionChain chain, HttpServletRequest request,
      HttpServletResponse response) throws IOException {
    if (CorsUtils.isPreFlightRequest(request)) {
      return true;
    }
    CorsConfiguration config = null;
    // The mapping puts its CORS step into the chain (an interceptor that is a configuration source)
    // for a cross-origin request to a handler with a configuration: the handler's merged with the
    // app's global one, as the DispatcherServlet would apply it.
    for (HandlerInterceptor i : chain.getInterceptorList()) {
      if (i instanceof CorsConfigurationSource source) {
        config = source.getCorsConfiguration(request);
        break;
      }
    }
    // Whether the request is cross-origin at all is the processor's to tell, as in Spring MVC: it
    // refuses an Origin it cannot parse (403) where the handler has a configuration, and one
    // without a configuration never looks at it (CorsUtils.isCorsRequest throws for such an Origin:
    // asked here first, a handler without CORS answered 500 to any request that sent one).
    return config == null || mapping.getCorsProcessor().processRequest(config, request, response);
  }
}
