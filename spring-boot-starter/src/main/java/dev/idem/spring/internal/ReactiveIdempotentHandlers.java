package dev.idem.spring.internal;

import dev.idem.spring.server.Idempotent;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.web.bind.annotation.RequestMapping;

/**
 * Finds, in a reactive (WebFlux) app, the handler methods marked {@link Idempotent} (on the method
 * or its class): the guard that reads the annotation is a servlet filter, so in such an app nothing
 * reads it, and a retry with the same key runs the handler again. The startup refuses them, as it
 * refuses {@code idem.server.routes} there.
 *
 * <p>Why it scans the context's {@code @Controller} beans for {@code @RequestMapping} methods
 * (spring-context and spring-web only) rather than read WebFlux's
 * {@code RequestMappingHandlerMapping}: the auto-configuration must not name a WebFlux type, so that
 * an app without WebFlux never loads one, and WebFlux's mapping detects its handlers by the same
 * rule ({@code @Controller} on the bean type, {@code @RequestMapping}, meta-annotations included,
 * on the method). Functional routes ({@code RouterFunction}) carry no annotation to find.
 */
public final class ReactiveIdempotentHandlers {
  private ReactiveIdempotentHandlers() {}

  /**
   * Throws if any {@code @Controller} bean has a request-mapping method marked {@link Idempotent}.
   * Reads bean types only: instantiates nothing (a lazy bean stays uncreated).
   *
   * @param beans the context's bean factory
   * @throws IllegalStateException naming each such handler ({@code Class.method}), and the fixes
   */
  public static void refuse(ListableBeanFactory beans) {
    TreeSet<String> found = new TreeSet<>();
    for (String name : beans.getBeanNamesForAnnotation(Controller.class)) {
      Class<?> type = beans.getType(name, false);
      if (type == null) {
        continue;
      }
      Class<?> user = ClassUtils.getUserClass(type);
      boolean onClass = AnnotatedElementUtils.hasAnnotation(user, Idempotent.class);
      Map<Method, Boolean> marked = MethodIntrospector.selectMethods(user,
          (MethodIntrospector.MetadataLookup<Boolean>) m -> AnnotatedElementUtils.hasAnnotation(m, RequestMapping.class)
              && (onClass || AnnotatedElementUtils.hasAnnotation(m, Idempotent.class)) ? Boolean.TRUE : null);
      for (Method m : marked.keySet()) {
        found.add(user.getName() + "." + m.getName());
      }
    }
    if (!found.isEmpty()) {
      List<String> handlers = new ArrayList<>(found);
      throw new IllegalStateException("@Idempotent marks the handler(s) " + handlers + ", but this is a reactive"
          + " (WebFlux) app and the guard that reads it is a servlet filter that only a servlet (Spring MVC) app"
          + " runs: nothing would guard them, and a retry with the same Idempotency-Key would run the handler again."
          + " Run the app on Spring MVC, or remove the annotation; or set idem.server.enabled=false");
    }
  }
}
