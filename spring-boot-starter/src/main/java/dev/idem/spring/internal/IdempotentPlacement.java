package dev.idem.spring.internal;

import dev.idem.spring.server.Idempotent;
import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.aop.framework.autoproxy.AutoProxyUtils;
import org.springframework.aop.scope.ScopedObject;
import org.springframework.aop.scope.ScopedProxyUtils;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;

/**
 * Finds the beans that carry {@link Idempotent} where no guard reads it, so that the startup can
 * refuse them: the guard reads the annotation through Spring MVC's handler mappings, on a handler
 * method or on the class of one, and nowhere else. It is not AOP advice: on a {@code @Service} or
 * {@code @Component} method, a JAX-RS (Jersey) resource, a functional endpoint's handler or a class
 * without a handler method, it does nothing, and a retry with the same key runs the method again
 * while its authors believe it guarded.
 *
 * <p>What it reads: the bean's own class, as Spring's {@code @EventListener} processor does (the
 * class a proxy was made for: {@link AutoProxyUtils#determineTargetClass}, then
 * {@link ClassUtils#getUserClass} for a CGLIB subclass), and the annotation as the guard reads it
 * ({@link AnnotatedElementUtils} find semantics: meta-annotations, superclass and interface
 * methods). Only the context's beans are read, by type: nothing is scanned or instantiated.
 *
 * <p>What is a handler: a method some {@code RequestMappingHandlerMapping} of the context or its
 * ancestors registered, Spring MVC's or WebFlux's (found by class name, so that an app without
 * WebFlux, or without Spring MVC, loads neither; a WebFlux handler is refused elsewhere, see
 * {@link ReactiveIdempotentHandlers}). A context that serves no requests and has no such mapping (a
 * {@code @SpringBootTest(webEnvironment = NONE)}, the parent of a hierarchy whose web child serves the
 * requests) is judged by the rule those mappings apply: a request-mapping method
 * ({@code @RequestMapping} or {@code @HttpExchange}, meta-annotations included) of a
 * {@code @Controller} class, so that the controllers of a Spring MVC app do not fail where no
 * dispatcher runs. A servlet web app is not such a context: it serves requests, and where neither it
 * nor an ancestor holds Spring MVC's mapping (a Jersey app; Spring MVC on the class path with its
 * auto-configuration excluded) the guard finds no handler to read the annotation on, so every mark
 * there, a controller's included, is refused.
 *
 * <p>A mark on a controller class guards its handlers for the methods {@link SafeMethods} does not
 * leave alone (POST, PUT, PATCH, DELETE...) only, so a class mark none of whose handlers may take
 * one (each mapped to GET, HEAD or OPTIONS only) guards nothing, and is refused too. A mapping
 * without a method condition takes every method, so its class's mark is kept. Which methods a
 * handler takes is its mapping's method condition where a mapping registered it, else the mapping
 * annotations' {@code method}, the class's and the method's together, as Spring MVC combines them.
 */
public final class IdempotentPlacement {
  /** Spring MVC's and WebFlux's mapping of annotated handler methods, by name: neither is required. */
  private static final List<String> MAPPINGS = List.of(
      "org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping",
      "org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping");

  /** What makes a method a handler of a {@code @Controller} class, by name: spring-web may be absent. */
  private static final List<String> MAPPING_ANNOTATIONS = List.of(
      "org.springframework.web.bind.annotation.RequestMapping",
      "org.springframework.web.service.annotation.HttpExchange");

  private IdempotentPlacement() {}

  /**
   * Throws if a bean of the context carries {@link Idempotent} on a method that is not a handler
   * method, or on a class that has no handler method or none that may take an unsafe method (only
   * GET, HEAD, OPTIONS: a class mark guards none of them); in a servlet web app that no Spring MVC
   * mapping serves (none in the context or its ancestors), wherever it is.
   *
   * @param beans the context's bean factory, every singleton made
   * @param servletApp whether the context is a servlet web app (it serves requests: a mark that no
   *     mapping reads there guards nothing), rather than a context that serves none
   *     ({@code webEnvironment = NONE}, a hierarchy's parent) or a reactive app
   * @throws IllegalStateException naming each such method ({@code Class.method}) and class, where
   *     the annotation works, and what guards other endpoints; naming a class mark that guards
   *     nothing for its safe-only handlers apart, with why
   */
  public static void refuseMisplaced(ConfigurableListableBeanFactory beans, boolean servletApp) {
    ClassLoader loader = beans.getBeanClassLoader();
    if (servletApp && !hasServletMapping(beans, loader)) {
      refuseAll(beans, new ByRule(mappingAnnotations(loader)));
      return;
    }
    Handlers handlers = handlers(beans, loader);
    // In a servlet app, a controller's request mapping that the context's mappings did not register:
    // Spring MVC's own mapping is missing and another one (Actuator's) is there. Said so, or its
    // author looks at the method.
    ByRule rule = servletApp && handlers instanceof Registered ? new ByRule(mappingAnnotations(loader)) : null;
    boolean unregistered = false;
    TreeSet<String> misplaced = new TreeSet<>();
    TreeSet<String> safeOnly = new TreeSet<>();
    List<Marked> all = marked(beans);
    // Whether a class mark guards some write, by where it comes from (markSource): a base class's or
    // a stereotype's mark that one read-only controller carries may guard another's writes.
    Map<Object, Boolean> guardsWrites = new HashMap<>();
    for (Marked marked : all) {
      if (marked.onClass() && handlers.hasHandler(marked.type())) {
        guardsWrites.merge(markSource(marked.type()), handlers.hasUnsafeHandler(marked.type()), Boolean::logicalOr);
      }
    }
    for (Marked marked : all) {
      for (Method m : marked.methods()) {
        if (handlers.isHandler(marked.type(), m)) {
          continue;
        }
        boolean controllers = rule != null && rule.isHandler(marked.type(), m);
        unregistered |= controllers;
        misplaced.add(marked.type().getName() + "." + m.getName() + (controllers
            ? " (a controller's request mapping that no Spring MVC mapping registered)" : " (not a handler method)"));
      }
      if (marked.onClass() && !handlers.hasHandler(marked.type())) {
        boolean controllers = rule != null && rule.hasHandler(marked.type());
        unregistered |= controllers;
        misplaced.add(marked.type().getName() + (controllers
            ? " (a controller whose request mappings no Spring MVC mapping registered)"
            : " (a class with no handler method)"));
      } else if (marked.onClass() && !guardsWrites.getOrDefault(markSource(marked.type()), true)) {
        // No class carrying this mark takes an unsafe method. One that guards another controller's
        // writes is kept: refusing the app for a read-only controller sharing it would advise
        // unguarding the rest.
        safeOnly.add(marked.type().getName() + markOrigin(marked.type()));
      }
    }
    List<String> refusals = new ArrayList<>();
    if (!misplaced.isEmpty()) {
      String why = !unregistered ? "" : " The context's request mappings (" + String.join(", ", mappingNames(beans, loader))
          + ") did not register a controller marked here, so Spring MVC does not serve it: is Spring MVC's"
          + " auto-configuration (WebMvcAutoConfiguration) excluded? Spring MVC's own RequestMappingHandlerMapping"
          + " registers the @Controller beans of its context.";
      refusals.add("@Idempotent marks " + new ArrayList<>(misplaced) + ", where nothing reads it:"
          + " the guard reads it only on a Spring MVC handler method (a @RequestMapping, @PostMapping... method of a"
          + " @Controller), or on a controller class for its handler methods. It is no AOP advice: on a @Service or"
          + " @Component method, a JAX-RS (Jersey) resource, a functional route's handler or a class without handler"
          + " methods it guards nothing, and a retry with the same Idempotency-Key runs the method again. Put it on"
          + " the Spring MVC handler that serves the request; guard other Spring MVC endpoints with"
          + " idem.server.routes, and endpoints that Spring MVC does not serve with the server module's"
          + " IdempotencyFilter (dev.idem.server.servlet); or remove the annotation." + why);
    }
    if (!safeOnly.isEmpty()) {
      refusals.add("@Idempotent on the controller class " + new ArrayList<>(safeOnly) + " guards nothing: a class's"
          + " mark guards its handlers for unsafe methods only (POST, PUT, PATCH, DELETE), and no handler of it takes"
          + " one (each is mapped to GET, HEAD or OPTIONS only), so every request to it runs unguarded, key or not."
          + " Put @Idempotent on the handlers that must be guarded (a handler's own mark guards it for GET too: an"
          + " export, a confirm link that makes an effect), or on a class whose handlers take unsafe methods; or"
          + " remove the class's mark.");
    }
    if (!refusals.isEmpty()) {
      throw new IllegalStateException(String.join(" ", refusals));
    }
  }

  /**
   * Where a class's {@code @Idempotent} comes from, as the guard finds it: the annotation type that
   * carries it (every class using that stereotype, directly or through another one built on it,
   * shares the mark), else the class that declares it (the class itself, or the base class or
   * interface it inherits it from).
   */
  private static Object markSource(Class<?> type) {
    MergedAnnotation<Idempotent> mark = MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY)
        .get(Idempotent.class);
    if (!mark.isPresent()) {
      return type;
    }
    if (mark.getDistance() > 0) {
      // The annotation that carries @Idempotent, not the one written on the class: a stereotype built
      // on a guarded stereotype shares its mark (review rtoday19).
      return mark.getMetaSource().getType();
    }
    return mark.getSource() != null ? mark.getSource() : type;
  }

  /** How a refused class carries its mark, when not written on it: named in the refusal. */
  private static String markOrigin(Class<?> type) {
    Object source = markSource(type);
    if (source instanceof Class<?> c && c.isAnnotation()) {
      return " (marked through @" + c.getSimpleName() + ", which no controller with an unsafe handler carries)";
    }
    if (source instanceof Class<?> c && c != type) {
      return " (its mark inherited from " + c.getName() + ", which no controller with an unsafe handler inherits)";
    }
    return "";
  }

  /** The beans that are request mappings, Spring MVC's or WebFlux's type or a subclass, by name. */
  private static List<String> mappingNames(ConfigurableListableBeanFactory beans, ClassLoader loader) {
    List<String> names = new ArrayList<>();
    for (String mappingType : MAPPINGS) {
      if (ClassUtils.isPresent(mappingType, loader)) {
        names.addAll(Arrays.asList(BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beans,
            ClassUtils.resolveClassName(mappingType, loader), true, false)));
      }
    }
    return names;
  }

  /**
   * Refuses every mark of a servlet app that no Spring MVC mapping serves, naming a class-level
   * mark by the methods it was meant for (those a mapping would take), or the class if it has none.
   */
  private static void refuseAll(ConfigurableListableBeanFactory beans, ByRule rule) {
    TreeSet<String> unread = new TreeSet<>();
    for (Marked marked : marked(beans)) {
      String name = marked.type().getName();
      marked.methods().forEach(m -> unread.add(name + "." + m.getName()));
      if (marked.onClass()) {
        Set<Method> meant = rule.handlerMethods(marked.type());
        meant.forEach(m -> unread.add(name + "." + m.getName()));
        if (meant.isEmpty()) {
          unread.add(name);
        }
      }
    }
    if (!unread.isEmpty()) {
      throw new IllegalStateException("@Idempotent marks " + new ArrayList<>(unread) + ", but this is a servlet app"
          + " without Spring MVC serving it (no Spring MVC RequestMappingHandlerMapping in the context: a Jersey app,"
          + " or Spring MVC's auto-configuration excluded), and the guard finds the handlers it reads the annotation"
          + " on only through that mapping: nothing reads it, and a retry with the same Idempotency-Key runs the"
          + " method again. Serve these endpoints with Spring MVC controllers, or guard them with the server"
          + " module's IdempotencyFilter (dev.idem.server.servlet) and remove the annotation; or set"
          + " idem.server.enabled=false");
    }
  }

  /** A bean class that carries the annotation: on the class, on methods, or both. */
  private record Marked(Class<?> type, boolean onClass, Set<Method> methods) {}

  private static List<Marked> marked(ConfigurableListableBeanFactory beans) {
    List<Marked> found = new ArrayList<>();
    Set<Class<?>> seen = new HashSet<>();
    for (String name : beans.getBeanNamesForType(Object.class, true, false)) {
      if (ScopedProxyUtils.isScopedTarget(name)) {
        continue;  // its proxy, under the plain name, stands for it
      }
      Class<?> type = beanClass(beans, name);
      if (type == null || !seen.add(type) || !AnnotationUtils.isCandidateClass(type, Idempotent.class)) {
        continue;
      }
      boolean onClass = AnnotatedElementUtils.hasAnnotation(type, Idempotent.class);
      Map<Method, Boolean> methods = MethodIntrospector.selectMethods(type,
          (MethodIntrospector.MetadataLookup<Boolean>) m -> AnnotatedElementUtils.hasAnnotation(m, Idempotent.class)
              ? Boolean.TRUE : null);
      if (onClass || !methods.isEmpty()) {
        found.add(new Marked(type, onClass, methods.keySet()));
      }
    }
    return found;
  }

  /**
   * Whether Spring MVC's mapping is in the context or an ancestor: the guard's filter asks the same
   * beans for a request's handler (a child's mapping, which it cannot see, does not count).
   */
  private static boolean hasServletMapping(ConfigurableListableBeanFactory beans, ClassLoader loader) {
    String mvc = MAPPINGS.get(0);
    return ClassUtils.isPresent(mvc, loader) && BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beans,
        ClassUtils.resolveClassName(mvc, loader), true, false).length > 0;
  }

  /**
   * The class the bean was made from: a proxy's target class, a CGLIB subclass's superclass; null
   * if it cannot be known. The guard reads a handler's marks on the same class ({@link HandlerTarget}).
   */
  static Class<?> beanClass(ConfigurableListableBeanFactory beans, String name) {
    Class<?> type;
    try {
      type = AutoProxyUtils.determineTargetClass(beans, name);
      if (type != null && ScopedObject.class.isAssignableFrom(type)) {
        // A scoped proxy (a request-scoped controller): its definition names no target class, and
        // with proxyMode INTERFACES its type is a JDK proxy, whose methods carry no mark. The
        // scoped target's class is the one the marks are on, as Spring's @EventListener processor
        // reads it.
        Class<?> target = AutoProxyUtils.determineTargetClass(beans, ScopedProxyUtils.getTargetBeanName(name));
        if (target != null) {
          type = target;
        }
      }
    } catch (RuntimeException unresolvable) {
      return null;  // as Spring's @EventListener processor: a type that cannot be known carries nothing to read
    }
    return type == null ? null : ClassUtils.getUserClass(type);
  }

  private static Handlers handlers(ConfigurableListableBeanFactory beans, ClassLoader loader) {
    Map<Class<?>, List<Method>> registered = new HashMap<>();
    Set<Class<?>> takingUnsafe = new HashSet<>();
    boolean anyMapping = false;
    for (String mappingType : MAPPINGS) {
      if (!ClassUtils.isPresent(mappingType, loader)) {
        continue;
      }
      Class<?> type = ClassUtils.resolveClassName(mappingType, loader);
      for (Object mapping : BeanFactoryUtils.beansOfTypeIncludingAncestors(beans, type, true, false).values()) {
        anyMapping = true;
        WebHandlers.addHandlerMethods(type, mapping, beans, registered, takingUnsafe);
      }
    }
    return anyMapping ? new Registered(registered, takingUnsafe) : new ByRule(mappingAnnotations(loader));
  }

  private static List<Class<? extends Annotation>> mappingAnnotations(ClassLoader loader) {
    List<Class<? extends Annotation>> mappingAnnotations = new ArrayList<>();
    for (String name : MAPPING_ANNOTATIONS) {
      if (ClassUtils.isPresent(name, loader)) {
        @SuppressWarnings("unchecked")
        Class<? extends Annotation> a = (Class<? extends Annotation>) ClassUtils.resolveClassName(name, loader);
        mappingAnnotations.add(a);
      }
    }
    return mappingAnnotations;
  }

  /** Which methods of a bean's class are handler methods. */
  private interface Handlers {
    boolean isHandler(Class<?> type, Method m);

    boolean hasHandler(Class<?> type);

    /**
     * Whether a handler method of the class may take a method that is not {@link SafeMethods safe}
     * (its mapping names one, or none: then it takes every method), which a class mark guards.
     */
    boolean hasUnsafeHandler(Class<?> type);
  }

  /**
   * The handler methods the context's mappings registered, by the bean class they were found on,
   * and the classes with a handler whose mapping may take an unsafe method.
   */
  private record Registered(Map<Class<?>, List<Method>> byType, Set<Class<?>> takingUnsafe) implements Handlers {
    @Override
    public boolean isHandler(Class<?> type, Method m) {
      for (Method h : byType.getOrDefault(type, List.of())) {
        // The mapping registers the method it selected, as this check does; by signature too, in
        // case one of them took a bridge or the other a superclass's declaration.
        if (h.equals(m) || h.getName().equals(m.getName()) && Arrays.equals(h.getParameterTypes(), m.getParameterTypes())) {
          return true;
        }
      }
      return false;
    }

    @Override
    public boolean hasHandler(Class<?> type) {
      return !byType.getOrDefault(type, List.of()).isEmpty();
    }

    @Override
    public boolean hasUnsafeHandler(Class<?> type) {
      return takingUnsafe.contains(type);
    }
  }

  /** Without a mapping to ask: the mappings' rule, a request-mapping method of a {@code @Controller} class. */
  private record ByRule(List<Class<? extends Annotation>> mappingAnnotations) implements Handlers {
    @Override
    public boolean isHandler(Class<?> type, Method m) {
      return AnnotatedElementUtils.hasAnnotation(type, Controller.class) && mapped(m);
    }

    @Override
    public boolean hasHandler(Class<?> type) {
      return !handlerMethods(type).isEmpty();
    }

    @Override
    public boolean hasUnsafeHandler(Class<?> type) {
      Set<String> classMethods = methods(type);
      for (Method m : handlerMethods(type)) {
        Set<String> taken = new HashSet<>(classMethods);
        taken.addAll(methods(m));  // Spring MVC's combination of the two method conditions: their union
        if (taken.isEmpty() || !taken.stream().allMatch(SafeMethods::isSafe)) {
          return true;
        }
      }
      return false;
    }

    /**
     * The HTTP methods the element's mapping annotations name ({@code @RequestMapping}'s
     * {@code method}, {@code @HttpExchange}'s, meta-annotations such as {@code @GetMapping}
     * included); none if they name none.
     */
    private Set<String> methods(AnnotatedElement element) {
      Set<String> methods = new HashSet<>();
      for (Class<? extends Annotation> a : mappingAnnotations) {
        AnnotationAttributes attributes = AnnotatedElementUtils.findMergedAnnotationAttributes(element, a, false, false);
        Object named = attributes == null ? null : attributes.get("method");
        if (named instanceof Object[] many) {
          for (Object one : many) {
            methods.add(one instanceof Enum<?> e ? e.name() : String.valueOf(one));
          }
        } else if (named instanceof String one && !one.isBlank()) {
          methods.add(one.trim().toUpperCase(Locale.ROOT));
        }
      }
      return methods;
    }

    Set<Method> handlerMethods(Class<?> type) {
      if (!AnnotatedElementUtils.hasAnnotation(type, Controller.class)) {
        return Set.of();
      }
      return MethodIntrospector.selectMethods(type,
          (MethodIntrospector.MetadataLookup<Boolean>) m -> mapped(m) ? Boolean.TRUE : null).keySet();
    }

    private boolean mapped(Method m) {
      for (Class<? extends Annotation> a : mappingAnnotations) {
        if (AnnotatedElementUtils.hasAnnotation(m, a)) {
          return true;
        }
      }
      return false;
    }
  }

  /**
   * What names spring-web's {@code HandlerMethod}: loaded only when a mapping exists, so that an
   * app without spring-web (a batch job) never loads it.
   */
  private static final class WebHandlers {
    private WebHandlers() {}

    /**
     * Adds the mapping's handler methods under the class the mapping saw and, for a bean it holds
     * by name, under the class that bean was made from (for a JDK proxy the mapping sees the
     * proxy's class); and those classes to {@code takingUnsafe} for a handler whose mapping may take
     * an unsafe method.
     */
    static void addHandlerMethods(Class<?> mappingType, Object mapping, ConfigurableListableBeanFactory beans,
        Map<Class<?>, List<Method>> into, Set<Class<?>> takingUnsafe) {
      Object methods;
      try {
        methods = mappingType.getMethod("getHandlerMethods").invoke(mapping);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("Idem could not read the handler methods of " + mappingType.getName(), e);
      }
      for (Map.Entry<?, ?> e : ((Map<?, ?>) methods).entrySet()) {
        org.springframework.web.method.HandlerMethod hm = (org.springframework.web.method.HandlerMethod) e.getValue();
        boolean unsafe = takesUnsafe(e.getKey());
        Class<?> seen = ClassUtils.getUserClass(hm.getBeanType());
        into.computeIfAbsent(seen, k -> new ArrayList<>()).add(hm.getMethod());
        if (unsafe) {
          takingUnsafe.add(seen);
        }
        if (hm.getBean() instanceof String name) {
          Class<?> made = beanClass(beans, name);
          if (made != null && made != seen) {
            into.computeIfAbsent(made, k -> new ArrayList<>()).add(hm.getMethod());
            if (unsafe) {
              takingUnsafe.add(made);
            }
          }
        }
      }
    }

    /**
     * Whether a mapping's {@code RequestMappingInfo} (Spring MVC's or WebFlux's: read by name) may
     * take a method that is not {@link SafeMethods safe}: it names one, or none. One that cannot be
     * read counts as taking one: a class mark is refused only where it surely guards nothing.
     */
    private static boolean takesUnsafe(Object info) {
      Set<?> named;
      try {
        Object condition = info.getClass().getMethod("getMethodsCondition").invoke(info);
        named = (Set<?>) condition.getClass().getMethod("getMethods").invoke(condition);
      } catch (ReflectiveOperationException | RuntimeException unreadable) {
        return true;
      }
      return named.isEmpty() || !named.stream().allMatch(m -> SafeMethods.isSafe(String.valueOf(m)));
    }
  }
}
