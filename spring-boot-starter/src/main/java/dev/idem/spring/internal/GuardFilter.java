package dev.idem.spring.internal;

import dev.idem.server.Claim;
import dev.idem.server.GuardResponse;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.servlet.IdempotencyFilter;
import dev.idem.spring.server.Idempotent;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.ResponseEntity;
import org.springframework.util.AntPathMatcher;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.UrlPathHelper;

/**
 * The guard in a Spring MVC app: one servlet filter that finds whether a request is guarded (a
 * route in {@code idem.server.routes}, or a handler marked {@link Idempotent}) and runs it through
 * the guard, in lease mode (the server module's {@link IdempotencyFilter}) or in transactional
 * mode (in a Spring transaction on the app's DataSource, through
 * {@link IdempotencyGuard#joinTransaction}). Every other request passes untouched.
 *
 * <p>Handlers are looked up through the app's {@link RequestMappingHandlerMapping}s, only if some
 * handler carries the annotation, and for GET, HEAD and OPTIONS only if a handler marked itself
 * takes one of them: a GET handler marked itself is guarded as a GET route is (a keyed request
 * runs it at most once per key; an unkeyed one runs unguarded). A mark on the controller class
 * guards its handlers for the other methods only (POST, PUT, PATCH, DELETE): a class's reads
 * would otherwise share the guard's records with its writes, a keyed GET answered a stale copy.
 * Marks are read on the class the handler's bean was made from and on that class's method
 * ({@link HandlerTarget}), as the startup's {@link IdempotentPlacement} reads them: behind a JDK
 * proxy, the implementation's, not the mapped interface's.
 *
 * <p>A guarded cross-origin request gets the CORS headers of its handler ({@code @CrossOrigin},
 * the app's global CORS mappings) before the guard runs, so that the guard's own answers (a replay,
 * 409, 422) carry them as the handler's did; an origin the handler refuses is answered 403 before
 * anything is claimed ({@link GuardCors}).
 *
 * <p>A request without a key header runs unguarded in both modes: it goes through the lease-mode
 * filter, which refuses it if the guard requires a key and otherwise passes it on (its body
 * neither read nor limited), never through a transactional run; a transactional handler's request
 * then runs in a plain Spring transaction of its own (see {@link TransactionalGuard}).
 *
 * <p>The caller, for key scope, is the app's (an {@code IdempotencyCaller} bean, or the header
 * {@code idem.server.caller-header} names) if it gave one, else the user principal's name,
 * "anonymous" without one. With the app's, a keyed request it names no caller for is refused 400
 * before anything is claimed: falling back to the principal or "anonymous" would put such
 * requests of every tenant in one scope. So is one whose caller header ({@link CallerHeader}) is
 * given more than once or holds a comma. Thread-safe.
 */
public final class GuardFilter extends OncePerRequestFilter implements SmartInitializingSingleton {
  private static final Logger LOG = LoggerFactory.getLogger(GuardFilter.class);
  private static final AntPathMatcher PATHS = new AntPathMatcher();

  /** The problem type of a keyed request the app's caller function names no caller for. */
  static final String CALLER_MISSING_TYPE = "urn:idem:problem:idempotency-caller-missing";

  /**
   * The caller of the request being guarded, resolved once by this filter before the guard's
   * filter asks for it, so that the app's function runs once per request.
   */
  private static final String CALLER = GuardFilter.class.getName() + ".CALLER";

  /**
   * Set on a request whose transactional run was rolled back because its handler answered
   * asynchronously (see {@link TransactionalGuard}): the request was answered and ended, and an
   * async dispatch that still comes with the late answer must run nothing. Here rather than in
   * TransactionalGuard, which an app without spring-tx never loads.
   */
  static final String ABANDONED_ASYNC = GuardFilter.class.getName() + ".ABANDONED_ASYNC";

  /** One way to guard: a guard, its servlet filter (with the caller function), and the mode. */
  record Guarded(IdempotencyGuard guard, IdempotencyFilter filter, boolean transactional) {}

  private record Route(String method, String pattern) {}

  private final GuardFactory factory;
  private final IdempotencyGuard defaultGuard;
  private final GuardFactory.Settings defaults;
  private final List<Route> routes = new ArrayList<>();
  private final Guarded routeGuard;
  private final Supplier<List<RequestMappingHandlerMapping>> mappings;
  private final Supplier<DataSource> dataSource;
  private final Supplier<Object> transactions;
  private final boolean storeInAppDatabase;
  private final long maxBufferedBody;
  /** By the handler's class and method: controllers inheriting one method may be marked apart. */
  private final Map<HandlerTarget, Guarded> byHandler = new ConcurrentHashMap<>();
  /** Where each registered handler's marks are read, found once (a bean definition and a reflective lookup). */
  private final Map<HandlerMethod, HandlerTarget> targets = new ConcurrentHashMap<>();
  private final ConfigurableListableBeanFactory beans;
  private final Map<Method, Boolean> asynchronous = new ConcurrentHashMap<>();
  private final Function<HttpServletRequest, String> appCaller;
  private final String appCallerName;
  private final AtomicBoolean warnedAnonymous = new AtomicBoolean();
  private volatile boolean anyAnnotated = true;
  /** Whether the mapping of a handler marked itself takes GET, HEAD or OPTIONS (or any method). */
  private volatile boolean anySafeAnnotated = true;

  /**
   * @param factory makes the guards of annotated handlers
   * @param defaultGuard the guard of {@code idem.server.routes} and of handlers with default settings
   * @param defaults the default guard's settings
   * @param routes "METHOD /pattern" entries
   * @param transactionalRoutes whether the routes run in transactional mode
   * @param storeInAppDatabase whether the guard's records are in the app's DataSource
   * @param mappings the app's handler mappings
   * @param dataSource the app's DataSource (transactional mode)
   * @param transactions its transaction manager (transactional mode), as Object: spring-tx may be absent
   * @param maxBufferedBody the most bytes of a transactional handler's answer held until the commit
   *     (see {@link TransactionalGuard}); 1 or more
   * @param appCaller the app's caller of a request, or null for the user principal's name; null or
   *     blank from it refuses a keyed request 400
   * @param appCallerName what {@code appCaller} is, for the refusal's text and the logs (such as
   *     "the X-Tenant header"); unused without appCaller
   * @param beans the bean factory the handlers' bean names resolve in, to read their marks on the
   *     class each bean was made from (a JDK proxy's target); null reads them on the mapping's class
   * @throws IllegalArgumentException if a route is not "METHOD /path", or maxBufferedBody is below 1
   */
  public GuardFilter(GuardFactory factory, IdempotencyGuard defaultGuard, GuardFactory.Settings defaults,
      List<String> routes, boolean transactionalRoutes, boolean storeInAppDatabase,
      Supplier<List<RequestMappingHandlerMapping>> mappings, Supplier<DataSource> dataSource,
      Supplier<Object> transactions, long maxBufferedBody, Function<HttpServletRequest, String> appCaller,
      String appCallerName, ConfigurableListableBeanFactory beans) {
    this.beans = beans;
    this.appCaller = appCaller;
    this.appCallerName = appCallerName;
    if (maxBufferedBody < 1) {
      throw new IllegalArgumentException("idem.server.max-buffered-body-bytes must be 1 or more: " + maxBufferedBody);
    }
    this.maxBufferedBody = maxBufferedBody;
    this.factory = factory;
    this.defaultGuard = defaultGuard;
    this.defaults = defaults;
    this.mappings = mappings;
    this.dataSource = dataSource;
    this.transactions = transactions;
    this.storeInAppDatabase = storeInAppDatabase;
    for (String r : routes) {
      String[] parts = r.trim().split("\\s+", 2);
      if (parts.length != 2 || !parts[1].startsWith("/")) {
        throw new IllegalArgumentException("idem.server.routes: '" + r + "' is not 'METHOD /path', such as 'POST /orders'");
      }
      this.routes.add(new Route(parts[0].toUpperCase(Locale.ROOT), parts[1]));
    }
    if (transactionalRoutes && !routes.isEmpty()) {
      checkTransactional("idem.server.routes");
    }
    this.routeGuard = new Guarded(defaultGuard, new IdempotencyFilter(defaultGuard, caller(null)), transactionalRoutes);
  }

  /**
   * Finds every annotated handler now, so that a misconfiguration fails the startup and named
   * guards are built before traffic; with transactional routes, also every handler a route surely
   * reaches that answers asynchronously (see {@link #refuseAsynchronous}).
   */
  @Override
  public void afterSingletonsInstantiated() {
    boolean found = false;
    boolean safeMarked = false;
    for (RequestMappingHandlerMapping m : mappings.get()) {
      for (Map.Entry<RequestMappingInfo, HandlerMethod> e : m.getHandlerMethods().entrySet()) {
        HandlerMethod hm = e.getValue();
        Set<RequestMethod> methods = e.getKey().getMethodsCondition().getMethods();
        boolean takesSafe = methods.isEmpty() || methods.stream().anyMatch(x -> safe(x.name()));
        boolean takesUnsafe = methods.isEmpty() || methods.stream().anyMatch(x -> !safe(x.name()));
        HandlerTarget t = target(hm);
        Idempotent own = ownMark(t);
        Idempotent a = own != null ? own : takesUnsafe ? classMark(t) : null;
        if (a != null) {
          found = true;
          safeMarked |= own != null && takesSafe;
          guarded(t, a);
        }
        if (routeGuard.transactional()) {
          Route r = routeCovering(e.getKey());
          if (r != null && asynchronous(hm.getMethod())) {
            throw asynchronousRoute(r, hm.getMethod());
          }
        }
      }
    }
    anyAnnotated = found;
    anySafeAnnotated = safeMarked;
    factory.seal();
  }

  @Override
  protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    if (isAsyncDispatch(request)) {
      // The end of an async handler (CompletableFuture, Callable, DeferredResult...): the guard's
      // filter stores and sends its answer when this dispatch returns. Not admitted again.
      if (request.getAttribute(ABANDONED_ASYNC) != null) {
        // A transactional run already rolled back and answered 500: the late answer goes nowhere.
        return;
      }
      if (request.getAttribute(Claim.ATTRIBUTE) != null) {
        routeGuard.filter().doFilter(request, response, chain);
      } else {
        chain.doFilter(request, response);
      }
      return;
    }
    Guarded g = resolve(request);
    // Without a key nothing is claimed or stored: the lease-mode filter refuses it if a key is
    // required and else passes it on untouched, as for a lease-mode handler. A transactional run
    // would read its body into memory under the guard's cap (413 past it) for nothing.
    boolean transactional = g != null && g.transactional() && request.getHeader(g.guard().keyHeader()) != null;
    if (g == routeGuard && g.transactional()) {
      // Keyed or not, such a request runs in a transaction that ends when the handler returns.
      refuseAsynchronous(request);
    }
    if (g != null && !cors(request, response)) {
      return;
    }
    if (g != null && !identifyCaller(g, request, response)) {
      return;
    }
    if (g == null) {
      chain.doFilter(request, response);
    } else if (transactional) {
      transactional(g, request, response, chain);
    } else if (g.transactional()) {
      // Unkeyed: its handler, written for transactional mode, still relies on a transaction for
      // its writes (JPA writes nothing without one). The lease-mode filter refuses it if a key is
      // required; else the handler runs in a plain transaction of its own, its body unread.
      Object manager = Objects.requireNonNull(transactions.get(), "transactions");
      g.filter().doFilter(request, response, (req, res) -> TransactionalGuard.runUnkeyed(g.guard(), manager,
          maxBufferedBody, (HttpServletRequest) req, (HttpServletResponse) res, chain));
    } else {
      g.filter().doFilter(request, response, chain);
    }
  }

  /**
   * Applies the handler's CORS configuration to a guarded cross-origin request before the guard
   * may answer it itself: see {@link GuardCors}. False if the origin is refused (403 sent).
   */
  private boolean cors(HttpServletRequest request, HttpServletResponse response) throws IOException {
    if (request.getHeader("Origin") == null) {
      return true;
    }
    Mapped m = mapped(request);
    return m == null || GuardCors.apply(m.mapping(), m.chain(), request, response);
  }

  @Override
  protected boolean shouldNotFilterAsyncDispatch() {
    return false;
  }

  @Override
  protected boolean shouldNotFilterErrorDispatch() {
    return true;
  }

  private Guarded resolve(HttpServletRequest request) {
    String method = request.getMethod().toUpperCase(Locale.ROOT);
    String raw = request.getRequestURI().substring(request.getContextPath().length());
    // MVC runs a handler for the decoded path without its ";" parameters and doubled slashes: a
    // route must be guarded however the request spells it (/pay%6Dents, /payments;v=1), or a
    // retried keyed POST runs twice. The raw spelling is matched too: guarding more never runs a
    // handler twice.
    String path = UrlPathHelper.defaultInstance.getPathWithinApplication(request);
    for (Route r : routes) {
      if (r.method().equals(method) && (PATHS.match(r.pattern(), path) || PATHS.match(r.pattern(), raw))) {
        return routeGuard;
      }
    }
    boolean safe = safe(method);
    if (!anyAnnotated || safe && !anySafeAnnotated) {
      return null;
    }
    HandlerMethod hm = handler(request);
    if (hm == null) {
      return null;
    }
    HandlerTarget t = target(hm);
    Idempotent a = ownMark(t);
    if (a == null && !safe) {
      a = classMark(t);
    }
    return a == null ? null : guarded(t, a);
  }

  /**
   * A transactional route's request whose handler answers asynchronously is refused before the
   * transaction begins: nothing runs, nothing is stored, and the exception (a 500 from the
   * container) names the handler and what to do. Routes are URL patterns, and which handler serves
   * a path is known for sure only per request (a route may name one path of a broader mapping, and a
   * more specific mapping may take some of a route's paths), so this check is the guarantee; the
   * startup check ({@link #routeCovering}) fails the app early for the routes that surely reach
   * such a handler, without refusing an app for an overlap no request can take. Both see only
   * annotated controller methods, by their declared return type; whatever answers asynchronously
   * past them (a functional endpoint's {@code ServerResponse.async}, a method declared to return
   * {@code Object}) is caught after it ran, by {@link TransactionalGuard}, and rolled back.
   */
  private void refuseAsynchronous(HttpServletRequest request) {
    HandlerMethod hm = handler(request);
    if (hm != null && asynchronous(hm.getMethod())) {
      String method = request.getMethod().toUpperCase(Locale.ROOT);
      String path = UrlPathHelper.defaultInstance.getPathWithinApplication(request);
      Route r = routes.stream().filter(x -> x.method().equals(method) && PATHS.match(x.pattern(), path)).findFirst()
          .orElse(new Route(method, path));
      throw asynchronousRoute(r, hm.getMethod());
    }
  }

  /**
   * The transactional route that surely reaches the handler of {@code info}, or null: one whose
   * method the mapping takes and whose pattern matches the mapping's pattern read as a path (so
   * {@code /orders/*} or {@code /orders/**} covers {@code /orders/{id}}): that path is then both
   * guarded and served by this handler. A route narrower than the mapping ({@code /orders/42}) is
   * left to the request-time check.
   */
  private Route routeCovering(RequestMappingInfo info) {
    Set<RequestMethod> methods = info.getMethodsCondition().getMethods();
    for (Route r : routes) {
      boolean method = methods.isEmpty() || methods.stream().anyMatch(m -> m.name().equals(r.method()));
      if (method && info.getPatternValues().stream().anyMatch(p -> PATHS.match(r.pattern(), p))) {
        return r;
      }
    }
    return null;
  }

  private boolean asynchronous(Method handler) {
    return asynchronous.computeIfAbsent(handler, GuardFilter::answersAsynchronously);
  }

  private static IllegalStateException asynchronousRoute(Route r, Method h) {
    // The transaction commits when the method returns, before the answer exists: the claim, the
    // writes and an empty answer would commit together and be replayed to every retry.
    return new IllegalStateException("idem.server.routes '" + r.method() + " " + r.pattern() + "' with"
        + " idem.server.transactional=true reaches " + h + ", which answers asynchronously ("
        + h.getReturnType().getSimpleName() + "): transactional mode commits when the method returns, before"
        + " the answer exists. Use lease mode (the default) for this handler: leave it out of the transactional"
        + " routes (a route decides before the handler's @Idempotent); or return the answer itself");
  }

  private HandlerMethod handler(HttpServletRequest request) {
    Mapped m = mapped(request);
    return m == null ? null : (HandlerMethod) m.chain().getHandler();
  }

  /** A request's handler chain, and the mapping that returned it. */
  private record Mapped(RequestMappingHandlerMapping mapping, HandlerExecutionChain chain) {}

  /**
   * The first mapping's chain for the request whose handler is a controller method, or null: none,
   * or one the dispatcher will refuse (405, 415), which the dispatcher answers.
   */
  private Mapped mapped(HttpServletRequest request) {
    Object previous = request.getAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE);
    try {
      ServletRequestPathUtils.parseAndCache(request);
      for (RequestMappingHandlerMapping m : mappings.get()) {
        HandlerExecutionChain chain = m.getHandler(request);
        if (chain != null && chain.getHandler() instanceof HandlerMethod) {
          return new Mapped(m, chain);
        }
      }
      return null;
    } catch (Exception e) {
      return null;
    } finally {
      if (previous != null) {
        request.setAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE, previous);
      } else {
        request.removeAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE);
      }
    }
  }

  /**
   * Whether a class's mark leaves requests of this method alone ({@link SafeMethods}). A handler
   * marked itself is guarded for them too.
   */
  private static boolean safe(String method) {
    return SafeMethods.isSafe(method);
  }

  /**
   * Where the handler's marks are read, the same at startup and per request: a request's handler
   * is resolved from the one the mapping registered, which is the key. Only handlers registered by
   * bean name are kept: they are as many as the mappings hold, while a mapping of its own could
   * make a handler of a new instance per request.
   */
  private HandlerTarget target(HandlerMethod hm) {
    HandlerMethod registered = hm.getResolvedFromHandlerMethod() != null ? hm.getResolvedFromHandlerMethod() : hm;
    if (!(registered.getBean() instanceof String)) {
      return HandlerTarget.of(registered, beans);
    }
    return targets.computeIfAbsent(registered, r -> HandlerTarget.of(r, beans));
  }

  /** The handler method's own mark (its interfaces' and superclasses' declarations too), or null. */
  private static Idempotent ownMark(HandlerTarget t) {
    return AnnotatedElementUtils.findMergedAnnotation(t.method(), Idempotent.class);
  }

  /** The mark of the handler's controller class, for requests of the methods that are not {@link #safe}. */
  private static Idempotent classMark(HandlerTarget t) {
    return AnnotatedElementUtils.findMergedAnnotation(t.type(), Idempotent.class);
  }

  private Guarded guarded(HandlerTarget target, Idempotent a) {
    return byHandler.computeIfAbsent(target, t -> {
      Method h = t.method();
      Duration retention = a.retention().isBlank() ? defaults.retention() : DurationStyle.detectAndParse(a.retention());
      int mismatch = a.mismatchStatus() == 0 ? defaults.mismatchStatus() : a.mismatchStatus();
      String operation = a.operation().isBlank() ? null : a.operation();
      GuardFactory.Settings s = new GuardFactory.Settings(retention, mismatch, a.keyRequired(), operation != null);
      if (a.transactional()) {
        checkTransactional("@Idempotent(transactional = true) on " + h);
        if (answersAsynchronously(h)) {
          // The transaction commits when the method returns, before the answer exists: the claim,
          // the writes and an empty answer would commit together and be replayed to every retry.
          throw new IllegalStateException("@Idempotent(transactional = true) on " + h + ", which answers"
              + " asynchronously (" + h.getReturnType().getSimpleName() + "): transactional mode commits when the"
              + " method returns, before the answer exists. Use lease mode (the default) for this handler, or"
              + " return the answer itself");
        }
      }
      IdempotencyGuard guard = s.equals(defaults) ? defaultGuard : factory.guard(s);
      return new Guarded(guard, new IdempotencyFilter(guard, caller(operation)), a.transactional());
    });
  }

  /**
   * Whether Spring MVC finishes this handler's answer after the method returned: its async return
   * values, a {@code ResponseEntity} of one, and the reactive types Spring adapts (found through
   * Spring's registry, so that no reactive library is named here).
   */
  static boolean answersAsynchronously(Method handler) {
    ResolvableType returned = ResolvableType.forMethodReturnType(handler);
    Class<?> type = returned.toClass();
    if (ResponseEntity.class.isAssignableFrom(type)) {
      type = returned.getGeneric(0).toClass();
    }
    return Callable.class.isAssignableFrom(type) || CompletionStage.class.isAssignableFrom(type)
        || Future.class.isAssignableFrom(type) || DeferredResult.class.isAssignableFrom(type)
        || WebAsyncTask.class.isAssignableFrom(type) || StreamingResponseBody.class.isAssignableFrom(type)
        || ResponseBodyEmitter.class.isAssignableFrom(type)
        || ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null;
  }

  private void checkTransactional(String where) {
    if (!storeInAppDatabase) {
      throw new IllegalStateException(where + " needs the guard's records in the app's database:"
          + " set idem.server.store=datasource");
    }
    if (dataSource.get() == null || transactions.get() == null) {
      throw new IllegalStateException(where + " needs a DataSource and a transaction manager bean"
          + " (spring-boot-starter-jdbc brings both)");
    }
  }

  /**
   * Resolves the caller of a guarded request once and keeps it on the request for the guard's
   * filter; or refuses a keyed request the app's caller function names no caller for.
   *
   * @return false if the request was answered
   */
  private boolean identifyCaller(Guarded g, HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    boolean keyed = request.getHeader(g.guard().keyHeader()) != null;
    String who;
    if (appCaller != null) {
      // A caller header given twice names two callers: whichever one were taken, a client could
      // put its own value beside the gateway's and be scoped as another tenant.
      String refused = appCaller instanceof CallerHeader h ? h.refusal(request) : null;
      who = refused == null ? appCaller.apply(request) : null;
      if (who == null || who.isBlank()) {
        if (keyed) {
          // Not the principal nor "anonymous": either would put every such tenant in one scope,
          // where one is replayed another's answer. An unkeyed request has no record to share.
          IdempotencyFilter.send(request, response, callerMissing(g.guard().keyHeader(), refused));
          return false;
        }
        who = null;
      }
    } else {
      Principal p = request.getUserPrincipal();
      who = p == null ? null : p.getName();
      if (who == null && keyed && warnedAnonymous.compareAndSet(false, true)) {
        LOG.warn("A keyed request reached a guarded route with no user principal, and no caller is configured:"
            + " every such request shares one key scope (\"anonymous\"), so two clients that pick the same key"
            + " get one operation and one answer. If the app tells its tenants apart without Spring Security,"
            + " set idem.server.caller-header or declare an IdempotencyCaller bean (docs/spring.md). Logged once.");
      }
    }
    request.setAttribute(CALLER, who == null ? "anonymous" : who);
    return true;
  }

  /**
   * @param refused why the caller cannot be told (such as a caller header given twice), or null
   *     when the app's caller names none
   */
  private GuardResponse callerMissing(String keyHeader, String refused) {
    String detail = "This request has an " + keyHeader + " but " + (refused != null ? refused
        : appCallerName + " names no caller for it") + "; a key is scoped by its caller, so nothing was processed.";
    String json = "{\"type\":\"" + CALLER_MISSING_TYPE + "\",\"title\":\"The caller of this request is unknown\","
        + "\"status\":400,\"detail\":" + quote(detail) + "}";
    return new GuardResponse(400, Map.of("Content-Type", List.of("application/problem+json")),
        json.getBytes(StandardCharsets.UTF_8));
  }

  private static String quote(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append('"').toString();
  }

  /**
   * Who is asking, as {@link #identifyCaller} found it; for an operation-scoped guard, that and the
   * operation, so that a key is unique per caller and operation.
   */
  private static Function<HttpServletRequest, String> caller(String operation) {
    return r -> {
      Object found = r.getAttribute(CALLER);
      // Always set before the guard's filter runs; the principal is the fallback of a caller the
      // filter never saw (an async dispatch, which asks none).
      String who = found instanceof String s ? s : principalOrAnonymous(r);
      return operation == null ? who : who + "|" + operation;
    };
  }

  private static String principalOrAnonymous(HttpServletRequest r) {
    Principal p = r.getUserPrincipal();
    return p == null ? "anonymous" : p.getName();
  }

  private void transactional(Guarded g, HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    TransactionalGuard.run(g.guard(), g.filter(), Objects.requireNonNull(dataSource.get(), "dataSource"),
        Objects.requireNonNull(transactions.get(), "transactions"), maxBufferedBody, request, response, chain);
  }
}
