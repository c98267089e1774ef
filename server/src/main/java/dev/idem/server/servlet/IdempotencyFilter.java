package dev.idem.server.servlet;

import dev.idem.server.spi.Admission;
import dev.idem.server.CapturedResponse;
import dev.idem.server.Claim;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.GuardRequest;
import dev.idem.server.GuardResponse;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.internal.BoundedCapture;
import dev.idem.server.internal.RateLimitedLog;
import dev.idem.server.internal.RequestBody;
import dev.idem.server.internal.SecretQueryParameters;
import dev.idem.server.internal.StoreReached;
import dev.idem.server.internal.TimeoutHeader;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The idempotency guard as a Jakarta Servlet filter (Servlet 6). Map it on the routes that create
 * effects:
 *
 * <pre>{@code
 * IdempotencyGuard guard = IdempotencyGuard.builder(JdbcIdempotencyStore.sqlite(Path.of("idem.db"))).build();
 * context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/orders/*",
 *     EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
 * }</pre>
 *
 * <p>For a keyed request it reads the body (up to the guard's request cap), claims the operation,
 * and runs the rest of the chain with that body. It holds the response back, up to the capture
 * cap, until the result is stored, so a client never sees a result that a crash could then
 * forget. A longer response is streamed once it passes the cap and is recorded without its body,
 * also when the client goes away while it streams (the handler's effect is done by then).
 * {@code sendError} and {@code sendRedirect} (also Servlet 6.1's {@code sendRedirect} with a
 * status or {@code clearBuffer}) are captured as a status (and {@code Location}) without a
 * container error page. They end the answer as the container does, and so do writing all the
 * content a declared length announced ({@code setContentLength}, {@code setContentLengthLong} or a
 * {@code Content-Length} header) and closing the output stream or writer: the body written before
 * is dropped ({@code sendError}, and a redirect unless {@code clearBuffer} is false), writes after
 * (and past a declared length) are dropped, and the response reads as committed: later status,
 * header, cookie, content type and locale changes are ignored, and {@code reset},
 * {@code resetBuffer}, {@code setBufferSize} and {@code setTrailerFields} throw
 * {@link IllegalStateException}, as the container's. A length declared after the body already
 * reached it cuts the body to it and (if more than zero) ends the answer, as Tomcat does, also on
 * Jetty, which does neither; a {@code Content-Length} header is parsed as the containers parse it
 * ({@code " 2"} is no length), and a null one forgets the length (Servlet 6.1). {@code flushBuffer}
 * commits the status and headers as the container's does: later changes to them are ignored and
 * the response reads as committed, while the body goes on. {@code getWriter} sets the encoding it
 * writes in (ISO-8859-1 by default) on the response for a {@code text/*} type or none, so the
 * Content-Type names it as the containers' own writer does (for other types, such as JSON, Jetty
 * names none and neither does the filter). The
 * handler reads the body the filter read (through {@code getInputStream} or {@code getReader}) and,
 * for a form-encoded POST, its parameters ({@code getParameter} and the rest: the query's first,
 * then the body's, decoded in the request's character encoding, ISO-8859-1 if it names none), as
 * the container would have parsed them had the filter not read the body. A form-encoded body that a
 * filter mapped before this one consumed (one that read the parameters, as a CSRF check does) is
 * fingerprinted by its parameters, canonically ordered, since its bytes are gone. A request that goes async
 * ({@code startAsync}) keeps its claim, and its lease renewal, until the async processing ends:
 * its answer is stored and sent when {@code AsyncContext.complete()} is called or when an async
 * dispatch returns; map the filter for {@code DispatcherType.ASYNC} too if the servlet answers on
 * an async dispatch. Otherwise, on a container that completes the response before notifying
 * listeners (Jetty), only the committed status goes out, with no body (the body the filter holds
 * back is never written); nothing is stored, the claim is released, and a
 * WARN says "map the filter for ASYNC dispatches too": a retry of the key runs the handler again.
 * A timeout or an error does not
 * release the claim: the container answers the client itself but does not stop the async work, and
 * a retry let in then would run the handler beside it. Nothing is stored, and the claim is let go
 * ({@link IdempotencyGuard#letGo}): its key stays in flight (409) for one to two lease periods, then
 * a retry runs the handler again. A handler (or an async dispatch) that throws after it went async
 * never releases its claim, since the work it started may still run: an answer that still comes
 * through the filter (the async dispatch the work asked for, or {@code complete()}) is stored and
 * sent, and if the async processing ends otherwise, the claim is let go in the same way. One that
 * throws without going async releases the claim, so that a retry runs it again.
 *
 * <p>The filter decides once per request: a forward, include, error or async dispatch of a request
 * it already decided on (admitted, let through or refused; mapped for those dispatcher types too)
 * passes through it, but for the async dispatch of a claimed request (above). The view a handler
 * forwards to writes that request's answer (a forward through the request's dispatcher clears what
 * the handler wrote before it, as the container's does), and the error page of a handler that threw
 * or of a refusal is not stored as the operation's.
 *
 * <p>The caller, for key scope, is the user principal's name by default; requests without one are
 * {@code "anonymous"}. The handler finds its {@link Claim} in the request attribute
 * {@value Claim#ATTRIBUTE} (for {@link Claim#operationId()}).
 *
 * <p>A servlet on a transactional route calls the guard itself, with the helpers here:
 * {@code IdempotencyFilter.send(request, response, guard.inTransaction(dataSource, filter.guardRequest(request), handler))}.
 *
 * <p>While the guard's store is down, every keyed request is answered 503, and the outage is
 * logged (at ERROR, on this class's logger) without flooding the log: the first failure with its
 * stack trace, then at most one line per 60 seconds (on the system clock) with the count of the
 * failures since the last line and the latest one's message, and one WARN with the last count once
 * requests get through again (with the first success an interval after the last line): only an
 * answer from the store counts as one, not an unkeyed request or a 400 for a missing key. Results
 * the store did not take (sent anyway, and stored later by the guard) are logged in the same way.
 * Each filter instance counts its own.
 *
 * <p>Thread-safe.
 */
public final class IdempotencyFilter implements Filter {
  /**
   * The most pairs (parameter values) a keyed form POST may hold when the guard reads its body,
   * 1000, as Jetty's {@code maxFormKeys} and Tomcat 10.1's {@code maxParameterCount} default: the
   * container parses no parameters from a body the guard read, so its limit does not apply, and
   * the guard keeps it. A form with more is refused 400 ({@link UnreadableFormException}), as the
   * container refuses it.
   */
  public static final int MAX_FORM_PAIRS = 1000;

  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyFilter.class);
  /** The request attribute that holds the pending end of an admitted request that went async. */
  private static final String ASYNC_ATTRIBUTE = IdempotencyFilter.class.getName() + ".async";
  /** Set on a request this filter decided on, so that its nested dispatches pass (see doFilter). */
  private static final String DECIDED_ATTRIBUTE = IdempotencyFilter.class.getName() + ".decided";

  private final IdempotencyGuard guard;
  /** The store-outage log of this filter: one line per interval, not one per request. */
  private final RateLimitedLog storeDown = new RateLimitedLog(LOG, "Idempotency store unavailable; answering 503",
      RateLimitedLog.DEFAULT_INTERVAL, Clock.systemUTC());
  /**
   * The log of results the store did not take: during an outage every request admitted before it
   * ends that way, so this too is one line per interval, not one per request.
   */
  private final RateLimitedLog resultNotStored = new RateLimitedLog(LOG,
      "Could not store the result of a request; sending it, and the guard tries the store again",
      RateLimitedLog.DEFAULT_INTERVAL, Clock.systemUTC());
  private final Function<HttpServletRequest, String> caller;

  /**
   * A filter that scopes keys by the user principal's name.
   *
   * @param guard the guard; the filter does not close it
   */
  public IdempotencyFilter(IdempotencyGuard guard) {
    this(guard, r -> {
      Principal p = r.getUserPrincipal();
      return p == null ? null : p.getName();
    });
  }

  /**
   * A filter with its own idea of the caller, such as a tenant header set by a trusted gateway.
   *
   * @param guard the guard; the filter does not close it
   * @param caller the caller of a request (an account or tenant id, never a credential); null
   *     means {@code "anonymous"}
   */
  public IdempotencyFilter(IdempotencyGuard guard, Function<HttpServletRequest, String> caller) {
    this.guard = Objects.requireNonNull(guard, "the filter's guard is null; build one with"
        + " IdempotencyGuard.builder(store).build()");
    this.caller = Objects.requireNonNull(caller, "caller");
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)) {
      chain.doFilter(req, res);
      return;
    }
    if (request.getDispatcherType() == DispatcherType.ASYNC && request.getAttribute(Claim.ATTRIBUTE) != null) {
      asyncDispatch(request, response, chain);
      return;
    }
    if (request.getDispatcherType() != DispatcherType.REQUEST && request.getAttribute(DECIDED_ATTRIBUTE) != null) {
      // A forward, include, error or async dispatch inside a request this filter already decided on
      // (mapped for every dispatcher type): admitted, let through unguarded, or refused. The guard's
      // work is that decision's. Admitted again, the dispatch found its own key in flight (a 409
      // inside the handler's own answer); after a handler threw (its claim released) or a refusal's
      // sendError, the error page claimed the key and was stored as the operation; an unkeyed
      // request let through on a key-optional route had its view refused for the missing key.
      chain.doFilter(req, res);
      return;
    }
    request.setAttribute(DECIDED_ATTRIBUTE, Boolean.TRUE);
    GuardRequest g = guardRequest(request);
    Admission admission;
    try {
      admission = guard.admit(g);
    } catch (UnreadableFormException e) {
      refuse(request, response, e);
      return;
    } catch (IdempotencyStoreException e) {
      storeDown.failed(e);
      send(request, response, guard.unavailableResponse());
      return;
    }
    if (StoreReached.by(admission)) {
      // Only an answer from the store says it is back: not an unkeyed GET, nor a 400 for a missing key.
      storeDown.succeeded();
    }
    if (admission instanceof Admission.Unguarded) {
      chain.doFilter(request, response);
    } else if (admission instanceof Admission.Respond r) {
      send(request, response, r.response());
    } else {
      Admission.Proceed p = (Admission.Proceed) admission;
      GuardedRequest cached = new GuardedRequest(request, p.body());
      cached.setAttribute(Claim.ATTRIBUTE, p.claim());
      run(cached, new CapturingResponse(response, guard.maxCapturedBody()), response, chain, p);
    }
  }

  /**
   * The guard's view of a request, as this filter reads it (key header, caller, stated timeout),
   * for a servlet that calls the guard itself, as a transactional route does.
   *
   * @param request the request; its body is read only if the guard needs it
   * @return the request for {@link IdempotencyGuard#admit} or {@link IdempotencyGuard#inTransaction}
   */
  public GuardRequest guardRequest(HttpServletRequest request) {
    Objects.requireNonNull(request, "request");
    List<String> keyValues = Collections.list(request.getHeaders(guard.keyHeader()));
    String timeoutHeader = guard.requestTimeoutHeader();
    return new GuardRequest(request.getMethod(), request.getRequestURI(), request.getQueryString(),
        request.getContentType(), keyValues, caller.apply(request),
        limit -> readBody(request, limit),
        timeoutHeader == null ? null : TimeoutHeader.parse(request.getHeader(timeoutHeader)));
  }

  /**
   * The body to fingerprint. A form-encoded body that a filter ahead of the guard has consumed (it
   * read the request's parameters: Spring's {@code FormContentFilter} for PUT, PATCH and DELETE,
   * a CSRF check, or the container on its behalf for a POST) reads empty here although the request
   * declares one; fingerprinting that would make every form to the route alike, and a key reused
   * with another form would be replayed, not refused. Its parameters, which is all anyone can still
   * read of it, are fingerprinted instead, canonically ordered ({@link FormBody#canonical}), and the
   * request is marked so that the handler is not handed them as its body. Such a form is held to
   * the cap by the length the client sent (its Content-Length), not by its canonical encoding,
   * which escapes what the client may have sent as it is; an encoding longer than the cap is
   * fingerprinted by its digest. One the container could not decode in full (Tomcat drops the
   * pairs it cannot read) is refused: its parameters no longer tell it from another form.
   *
   * <p>A form POST the guard reads itself, whose parameters the handler gets from the guard's
   * parse ({@link CachedBodyRequest}), is refused when it holds more than {@link #MAX_FORM_PAIRS}
   * pairs, as the container refuses it: the guard's read bypasses the container's limit.
   *
   * <p>A {@code multipart/*} body is left to the container, which parses it into the parts the
   * handler reads, and fingerprinted by its parts ({@link MultipartBody}); if the servlet has no
   * multipart configuration, it is read as any other body, and the handler finds no parts.
   */
  private static byte[] readBody(HttpServletRequest request, int limit) throws IOException {
    if (MultipartBody.isMultipart(request.getContentType())) {
      byte[] parts = MultipartBody.fingerprint(request, limit);
      if (parts != null) {
        // The container holds the parts for the handler; the stream is the container's, read.
        request.setAttribute(FormBody.FINGERPRINTED_PARAMETERS, Boolean.TRUE);
        return parts;
      }
    }
    long declared = request.getHeader("Transfer-Encoding") != null ? -1 : request.getContentLengthLong();
    byte[] body = RequestBody.read(request.getInputStream(), declared, limit);
    if (body.length == declared) {
      UnreadBody.readToEnd(request);
    }
    if (body.length == 0 && declared != 0 && FormBody.isForm(request.getContentType())) {
      Map<String, String[]> parameters = request.getParameterMap();
      if (request.getAttribute(FormBody.TOMCAT_PARSE_FAILED) != null) {
        throw new UnreadableFormException("The form could not be decoded in full (a broken %-escape, or more"
            + " parameters than the server takes); its parameters cannot tell it from another form, so it is"
            + " refused under an idempotency key. Nothing was processed.");
      }
      request.setAttribute(FormBody.FINGERPRINTED_PARAMETERS, Boolean.TRUE);
      long sent = declared > 0 ? declared : FormBody.leastLength(parameters, FormBody.charset(request));
      if (sent >= limit) {
        // Over the cap, the guard refuses it (413) as it does a body that long.
        return new byte[limit];
      }
      // Without the credentials it holds, as the fingerprint of a form read here and of the query
      // leave them out (the digest below would otherwise keep them): a form's access_token, and
      // the values the query gave a credential name (the map holds the query's values of a name
      // first, then the form's, which are the operation's data and stay).
      Map<String, Integer> fromQuery = SecretQueryParameters.valuesIn(request.getQueryString());
      Map<String, String[]> kept = new LinkedHashMap<>();
      parameters.forEach((name, values) -> {
        if (SecretQueryParameters.FORM_NAMES.contains(name.toLowerCase(Locale.ROOT))) {
          return;
        }
        int queried = Math.min(fromQuery.getOrDefault(name, 0), values.length);
        if (queried < values.length) {
          kept.put(name, Arrays.copyOfRange(values, queried, values.length));
        }
      });
      byte[] canonical = FormBody.canonical(kept);
      return canonical.length < limit ? canonical : FormBody.digest(canonical, limit - 1);
    }
    if (body.length < limit && FormBody.hasBodyParameters(request) && FormBody.pairs(body) > MAX_FORM_PAIRS) {
      throw new UnreadableFormException("The form has more than " + MAX_FORM_PAIRS + " parameters. Nothing was"
          + " processed.");
    }
    return body;
  }

  /**
   * The request as a handler behind the guard gets it, for a servlet or filter that calls the guard
   * itself (a transactional route): the body the guard read replayed through
   * {@link HttpServletRequest#getInputStream()} and {@link HttpServletRequest#getReader()}, and for
   * a form-encoded POST ({@code application/x-www-form-urlencoded}) the parameters parsed from it,
   * after the query's, in the request's character encoding (ISO-8859-1 if it has none), since the
   * container parses none from a body the guard has read. A form that a filter ahead of the guard
   * consumed keeps the parameters that filter or the container parsed, and has no body to replay.
   * The filter hands its chain this same view.
   *
   * @param request the request the guard admitted, as given to {@link #guardRequest}
   * @param body the body the guard handed the handler ({@code Admission.Proceed.body()}, or the
   *     transactional handler's {@code body}); not copied
   * @return the request for the handler; as thread-safe as a request is
   * @throws NullPointerException if request or body is null
   */
  public static HttpServletRequest withBody(HttpServletRequest request, byte[] body) {
    return new CachedBodyRequest(Objects.requireNonNull(request, "request"), Objects.requireNonNull(body, "body"));
  }

  private void run(GuardedRequest request, CapturingResponse capture, HttpServletResponse response,
      FilterChain chain, Admission.Proceed p) throws IOException, ServletException {
    request.capture = capture;
    request.end = new AsyncEnd(p.claim(), capture, response);
    try {
      chain.doFilter(request, capture);
      if (request.isAsyncStarted()) {
        request.wentAsync();
      }
      if (request.end.started) {
        // The handler answers later, on another thread or an async dispatch (Spring MVC's
        // CompletableFuture, Callable, DeferredResult): what the capture holds now is not its answer.
        // The claim, and its lease renewal, stay until the async processing ends (it may have already).
        return;
      }
      capture.finishWriting();
    } catch (IOException | ServletException | RuntimeException | Error e) {
      if (request.end.started) {
        // The handler went async, then threw: the work it started may still run, and make its
        // effect, on another thread, and may still end the async processing with its answer.
        // Never release the claim; the end of the async processing decides.
        request.end.threwWhileAsync(e);
      } else {
        failed(p.claim(), capture, response, e);
      }
      throw e;
    }
    finish(p.claim(), capture, response);
  }

  /**
   * The async dispatch of a request a guard admitted (the filter is mapped for ASYNC): admitting
   * it again would find its own claim in flight. When the dispatch returns without going async
   * again, the answer is complete: it is stored and sent here, while the response is still open.
   */
  private static void asyncDispatch(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    AsyncEnd end = (AsyncEnd) request.getAttribute(ASYNC_ATTRIBUTE);
    try {
      chain.doFilter(request, response);
    } catch (IOException | ServletException | RuntimeException | Error e) {
      // The handler threw on this thread, which is the end of its run unless it went async again:
      // then its work may go on elsewhere, and the end of that async processing decides.
      if (end != null) {
        if (request.isAsyncStarted()) {
          end.threwWhileAsync(e);
        } else {
          end.threw(e);
        }
      }
      throw e;
    }
    if (end != null && !request.isAsyncStarted()) {
      end.complete();
    }
  }

  /** A handler threw: releases the claim, unless its effect had reached a client that went away. */
  private void failed(Claim claim, CapturingResponse capture, HttpServletResponse response, Throwable e) {
    if (capture.capture.outputFailed()) {
      recordWithoutBody(claim, capture.getStatus(), headers(response), e);
    } else {
      try {
        guard.abandon(claim);
      } catch (RuntimeException release) {
        e.addSuppressed(release);
      }
    }
  }

  /** The handler's answer is complete: stores it, then sends it (or the refusal). */
  private void finish(Claim claim, CapturingResponse capture, HttpServletResponse response) throws IOException {
    byte[] held = capture.capture.held();
    CompletionResult result;
    try {
      result = guard.complete(claim, new CapturedResponse(capture.getStatus(), headers(response), held));
      resultNotStored.succeeded();
    } catch (IdempotencyStoreException e) {
      // The effect exists but its result is not stored yet (the guard keeps the lease and tries again
      // in the background); the client should still learn it.
      LOG.debug("Could not store the result of {}", claim);
      resultNotStored.failed(e);
      result = CompletionResult.STORED;
    }
    if (capture.capture.spilled()) {
      response.getOutputStream().flush();
      return;
    }
    if (result == CompletionResult.REFUSED) {
      // The handler's answer is not sent, but a CORS allowance set ahead of the guard (a CorsFilter,
      // the starter's) is kept: without it a browser cannot read the 409 that tells it to retry.
      Map<String, List<String>> cors = crossOrigin(response);
      response.reset();
      cors.forEach((name, values) -> values.forEach(v -> response.addHeader(name, v)));
      write(response, guard.refusedResponse());
      return;
    }
    writeBody(response, held);
  }

  /**
   * Ends the claim of a request that went async, when its async processing ends. The handler's
   * response wrapper is what the async processing writes to ({@code startAsync} is given it, also
   * without arguments), so the capture ends up holding its answer. The answer is stored and sent
   * before the response closes: by {@link AsyncContext#complete()} (the context is wrapped), or
   * at the end of an async dispatch that this filter sees. A timeout or an error lets the claim go
   * ({@link IdempotencyGuard#letGo}) without storing or releasing it, since the async work may still
   * run (the container does not stop it, and its later {@code complete()} is too late to be seen: the
   * request has been answered and recycled), and lets what the container or framework then answers
   * through unstored. A handler or async dispatch that throws after going async is decided when its
   * async processing ends: by its answer if that still comes through this filter (an async dispatch
   * or {@code complete()}), else the claim is let go in the same way; an async dispatch that throws
   * without going async again releases the claim, as a thrown handler does. Only the first end counts.
   */
  private final class AsyncEnd implements AsyncListener {
    private final Claim claim;
    private final CapturingResponse capture;
    private final HttpServletResponse response;
    private final AtomicBoolean ended = new AtomicBoolean();
    /** The claim was let go or released without an answer: what goes out is not stored. */
    private volatile boolean unstored;
    /** Whether the request went async; only the thread that runs the chain writes it. */
    private volatile boolean started;
    /**
     * What the handler threw on a request thread after it went async, or null: the async processing
     * has not ended by it, and lets the claim go at its end unless an answer came through first.
     */
    private volatile Throwable threwWhileAsync;

    AsyncEnd(Claim claim, CapturingResponse capture, HttpServletResponse response) {
      this.claim = claim;
      this.capture = capture;
      this.response = response;
    }

    /** The answer is complete: store and send it (once). */
    void complete() throws IOException {
      if (!ended.compareAndSet(false, true)) {
        return;
      }
      try {
        capture.finishWriting();
      } catch (IOException | RuntimeException e) {
        failed(claim, capture, response, e);
        throw e;
      }
      finish(claim, capture, response);
    }

    @Override
    public void onComplete(AsyncEvent event) throws IOException {
      Throwable threw = threwWhileAsync;
      if (threw != null) {
        // The handler threw after it went async, and the async processing ended without an answer
        // through this filter (or the claim was let go already): the container answered the error
        // itself, while the work the handler started may still run.
        letGo("threw after it went async", threw);
      }
      if (unstored) {
        // Timeout, error, thrown dispatch: the answer goes out as it is, never stored.
        byte[] held = capture.capture.held();
        if (held != null && held.length > 0 && !response.isCommitted()) {
          writeBody(response, held);
        }
        return;
      }
      if (!ended.get() && response.isCommitted() && !capture.capture.spilled()) {
        // The container closed the response before this filter could send the answer (an async
        // dispatch the filter is not mapped for, on a container that completes first): what the
        // client got is not the answer, so it must not be what retries replay.
        if (ended.compareAndSet(false, true)) {
          LOG.warn("The async answer of {} could not be sent: map the filter for ASYNC dispatches too;"
              + " releasing its claim", claim);
          guard.abandon(claim);
        }
        return;
      }
      complete();
    }

    @Override
    public void onTimeout(AsyncEvent event) {
      letGo("timed out", event.getThrowable());
    }

    /**
     * As a timeout, not as a thrown handler: the container reports an error of the request (its
     * connection broke, say) while the async work may still be running on its own thread. After the
     * handler threw on a request thread this decides nothing: the container reports that throw here
     * and may still run the async dispatch the work asked for before it (Jetty 12 does), whose answer
     * must be stored; {@code onComplete}, which always follows, lets the claim go if none came.
     */
    @Override
    public void onError(AsyncEvent event) {
      if (threwWhileAsync != null) {
        return;
      }
      letGo("failed", event.getThrowable());
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
      // A new async cycle drops the listeners: stay until the last one ends.
      event.getAsyncContext().addListener(this);
    }

    /**
     * The async processing ended without an answer while the handler may still run: keeps the key in
     * flight, bounded, rather than let a retry run the handler beside it. An answer that was
     * streaming to a client that went away is recorded without its body, as for a thrown handler.
     */
    private void letGo(String how, Throwable cause) {
      if (!ended.compareAndSet(false, true)) {
        return;
      }
      unstored = true;
      if (capture.capture.outputFailed()) {
        failed(claim, capture, response, new IOException("async processing of " + claim + " " + how, cause));
        return;
      }
      guard.letGo(claim);
      LOG.warn("The async processing of {} {} while its handler may still run; nothing is stored, and its key stays"
          + " in flight until its lease runs out (one to two lease periods), then a retry runs the handler again",
          claim, how);
    }

    /**
     * The handler threw on the request thread (the first dispatch or an async one) after it went
     * async: the throw ends this thread's part only, and the async work it started may still run and
     * make its effect, so the claim is never released. Nor is it decided here: the work may have
     * asked for an async dispatch already (how Spring MVC's Callable and DeferredResult end), which
     * the container still runs after the throw and whose answer must then be stored, or it may end
     * the async processing with {@code complete()}. The claim stays held, and renewed, until the
     * async processing ends, which the container always reports once {@code startAsync} happened:
     * an answer through this filter first is stored and sent; otherwise {@code onComplete},
     * {@code onError} or {@code onTimeout} lets the claim go, as for a timeout. If the async
     * processing already ended (the work completed before the throw), its answer stays stored. A
     * handler that started async without handing any work off keeps its key in flight too: the
     * filter cannot tell the two apart, and a 409 for a lease period is the safe mistake.
     */
    void threwWhileAsync(Throwable e) {
      threwWhileAsync = e;
    }

    /** The async dispatch threw and ended the handler's run: releases the claim, as for a thrown handler. */
    void threw(Throwable e) {
      if (!ended.compareAndSet(false, true)) {
        return;
      }
      unstored = true;
      int suppressed = e.getSuppressed().length;
      failed(claim, capture, response, e);
      if (e.getSuppressed().length > suppressed) {
        LOG.error("Could not release the claim of {}; the guard tries the release again in the background", claim,
            e.getSuppressed()[suppressed]);
      }
    }
  }

  /** The async context as a guarded handler sees it: completing it sends the stored answer first. */
  private static final class GuardedAsyncContext implements AsyncContext {
    private final AsyncContext context;
    private final ServletRequest request;

    GuardedAsyncContext(AsyncContext context, ServletRequest request) {
      this.context = context;
      this.request = request;
    }

    @Override
    public void complete() {
      AsyncEnd end = (AsyncEnd) request.getAttribute(ASYNC_ATTRIBUTE);
      try {
        if (end != null) {
          end.complete();
        }
      } catch (IOException e) {
        LOG.warn("Could not send the async answer: {}", e.toString());
      } finally {
        context.complete();
      }
    }

    @Override
    public ServletRequest getRequest() {
      return context.getRequest();
    }

    @Override
    public ServletResponse getResponse() {
      return context.getResponse();
    }

    @Override
    public boolean hasOriginalRequestAndResponse() {
      return context.hasOriginalRequestAndResponse();
    }

    @Override
    public void dispatch() {
      context.dispatch();
    }

    @Override
    public void dispatch(String path) {
      context.dispatch(path);
    }

    @Override
    public void dispatch(jakarta.servlet.ServletContext servletContext, String path) {
      context.dispatch(servletContext, path);
    }

    @Override
    public void start(Runnable run) {
      context.start(run);
    }

    @Override
    public void addListener(AsyncListener listener) {
      context.addListener(listener);
    }

    @Override
    public void addListener(AsyncListener listener, ServletRequest servletRequest, ServletResponse servletResponse) {
      context.addListener(listener, servletRequest, servletResponse);
    }

    @Override
    public <T extends AsyncListener> T createListener(Class<T> clazz) throws ServletException {
      return context.createListener(clazz);
    }

    @Override
    public void setTimeout(long timeout) {
      context.setTimeout(timeout);
    }

    @Override
    public long getTimeout() {
      return context.getTimeout();
    }
  }

  /**
   * The client went away while an over-cap body streamed: the handler had made its effect and its
   * status had gone out, so the failure is the client's, not the handler's. Recorded as an over-cap
   * response (body omitted); releasing the claim instead would let the client's retry run the
   * effect again.
   */
  private void recordWithoutBody(Claim claim, int status, Map<String, List<String>> headers, Throwable failure) {
    LOG.info("The client of {} went away while its over-cap response streamed; storing the result without"
        + " its body", claim);
    try {
      guard.complete(claim, new CapturedResponse(status, headers, null));
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  /** The response's {@code Access-Control-*} and {@code Vary} headers, as set so far. */
  private static Map<String, List<String>> crossOrigin(HttpServletResponse response) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (String name : headerNames(response)) {
      if (name.regionMatches(true, 0, "Access-Control-", 0, 15) || name.equalsIgnoreCase("Vary")) {
        out.put(name, new ArrayList<>(response.getHeaders(name)));
      }
    }
    return out;
  }

  /**
   * The response's header names, each once whatever its case: Tomcat lists a name once per header
   * line, so taking every value of each listed name repeated a header of n lines n times over (a
   * CorsFilter's three Vary lines came out nine times; a handler's two Link lines were stored and
   * replayed as four).
   */
  private static Collection<String> headerNames(HttpServletResponse response) {
    Set<String> seen = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    List<String> names = new ArrayList<>();
    for (String name : response.getHeaderNames()) {
      if (seen.add(name)) {
        names.add(name);
      }
    }
    return names;
  }

  private static Map<String, List<String>> headers(HttpServletResponse response) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (String name : headerNames(response)) {
      out.put(name, new ArrayList<>(response.getHeaders(name)));
    }
    if (response.getContentType() != null) {
      out.keySet().removeIf(n -> n.equalsIgnoreCase("Content-Type"));
      out.put("Content-Type", List.of(response.getContentType()));
    }
    return out;
  }

  /**
   * Writes one of the guard's responses (a replay, a refusal, a transactional route's answer).
   *
   * <p>A refusal is often written before the request's body was read (a missing key, a store that
   * is down). The body's bytes that have already arrived are read and dropped, up to 64 KiB; if
   * more may follow, the response says {@code Connection: close}. Without this a container that
   * finds unread bytes after the response was committed closes the connection without telling the
   * client, whose next request on it then fails (Jetty 12 does).
   *
   * @param request the request being answered; its unread body is dropped as above
   * @param response the servlet response, not yet committed
   * @param answer what to send
   * @throws IOException if writing fails
   */
  public static void send(HttpServletRequest request, HttpServletResponse response, GuardResponse answer)
      throws IOException {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(response, "response");
    Objects.requireNonNull(answer, "answer");
    if (!UnreadBody.drop(request)) {
      response.setHeader("Connection", "close");
    }
    write(response, answer);
  }

  /**
   * Answers a keyed form the guard cannot take ({@link UnreadableFormException}) 400, with the
   * exception's message as the reason, as the container answers a form it cannot parse (its error
   * page renders it). Nothing was claimed.
   *
   * @param request the request whose body reader threw
   * @param response the servlet response, not yet committed
   * @param e what the body reader threw
   * @throws IOException if writing fails
   */
  public static void refuse(HttpServletRequest request, HttpServletResponse response, UnreadableFormException e)
      throws IOException {
    Objects.requireNonNull(e, "e");
    if (!UnreadBody.drop(request)) {
      response.setHeader("Connection", "close");
    }
    response.sendError(400, e.getMessage());
  }

  private static void write(HttpServletResponse response, GuardResponse g) throws IOException {
    response.setStatus(g.status());
    g.headers().forEach((name, values) -> {
      if (!values.isEmpty()) {
        response.setHeader(name, values.get(0));
        values.subList(1, values.size()).forEach(v -> response.addHeader(name, v));
      }
    });
    writeBody(response, g.body());
  }

  private static void writeBody(HttpServletResponse response, byte[] body) throws IOException {
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
    response.getOutputStream().flush();
  }

  /** The request as the handler sees it: its body replayed, and its claim's end if it goes async. */
  private static final class GuardedRequest extends CachedBodyRequest {
    /** The response the chain was given; null only before the chain runs. */
    CapturingResponse capture;
    /** The end of the claim if the request goes async; null only before the chain runs. */
    AsyncEnd end;

    GuardedRequest(HttpServletRequest request, byte[] body) {
      super(request, body);
    }

    /**
     * A forward clears what the handler wrote before it, as the Servlet spec has the container do,
     * and is refused once the answer is committed: Jetty clears only its own response's buffer,
     * never the wrapper the handler was given, so the handler's draft stayed in the capture ahead
     * of the view's answer, and was stored and replayed. Only the request's dispatcher does: one
     * from {@code getServletContext()} ({@code getRequestDispatcher}, {@code getNamedDispatcher})
     * is the container's own, and on Jetty a draft written before forwarding through it stays.
     */
    @Override
    public RequestDispatcher getRequestDispatcher(String path) {
      RequestDispatcher dispatcher = super.getRequestDispatcher(path);
      return dispatcher == null ? null : new ClearingDispatcher(dispatcher, capture);
    }

    /**
     * Without arguments the container would hand the async processing its own, unwrapped request
     * and response, and the answer would bypass the capture: it would reach the client unstored.
     */
    @Override
    public AsyncContext startAsync() {
      return startAsync(this, capture);
    }

    @Override
    public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
      AsyncContext context = super.startAsync(request, response);
      wentAsync();
      return new GuardedAsyncContext(context, this);
    }

    /**
     * Registered as soon as async starts, before the chain returns: the async processing may
     * complete on another thread before then.
     */
    void wentAsync() {
      if (!end.started) {
        end.started = true;
        setAttribute(ASYNC_ATTRIBUTE, end);
        super.getAsyncContext().addListener(end);
      }
    }

    @Override
    public AsyncContext getAsyncContext() {
      return new GuardedAsyncContext(super.getAsyncContext(), this);
    }
  }

  /** A dispatcher whose forward clears the capture first (see {@link GuardedRequest#getRequestDispatcher}). */
  private record ClearingDispatcher(RequestDispatcher dispatcher, CapturingResponse capture)
      implements RequestDispatcher {
    @Override
    public void forward(ServletRequest request, ServletResponse response) throws ServletException, IOException {
      if (capture != null) {
        if (capture.isCommitted()) {
          throw new IllegalStateException("cannot forward: the response is committed");
        }
        capture.resetBuffer();
        // Jetty's forward lets the view take the writer or the stream whichever the handler took;
        // Tomcat's refuses the other one, so forgetting is never stricter than a container.
        capture.forgetOutput();
      }
      dispatcher.forward(request, response);
    }

    @Override
    public void include(ServletRequest request, ServletResponse response) throws ServletException, IOException {
      dispatcher.include(request, response);
    }
  }

  /** The response as the handler sees it: body held back up to the cap, never committed early. */
  private static final class CapturingResponse extends HttpServletResponseWrapper {
    final BoundedCapture capture;
    /**
     * Whether the answer ended: by sendRedirect or sendError, by writing all the content a
     * declared Content-Length announced, or by closing the output stream or writer (Servlet spec,
     * closure of the response). The container stops taking body at that point and ignores later
     * status and header changes (its facade reads as committed); capturing either would store and
     * replay an answer that the handler's client never gets without the guard. Read it through
     * {@link #ended()}.
     */
    private boolean ended;
    /**
     * Whether {@link #flushBuffer()} committed the status and headers: the container sends them
     * there, so later status and header changes never reach the handler's client (they are ignored
     * here too), while the body goes on until the answer ends.
     */
    private boolean flushed;
    /** The Content-Length the handler declared, or -1; body past it is dropped, as the container's. */
    private long declared = -1;
    /** Body bytes taken since the last buffer reset, to see when the declared length is reached. */
    private long written;
    private ServletOutputStream stream;
    /** Whether the handler took the output stream: the writer is refused then, as the container's. */
    private boolean streamTaken;
    /** Whether the handler took the writer: the stream is refused then, as the container's. */
    private boolean writerTaken;
    /** Made at the first getWriter, and kept: a handler may write through it after a reset. */
    private PrintWriter writer;
    /** The encoding {@link #writer} writes in. */
    private Charset writerCharset;

    CapturingResponse(HttpServletResponse response, int cap) {
      super(response);
      this.capture = new BoundedCapture(cap, () -> response.getOutputStream());
    }

    /**
     * As the container's: refused once the handler took the writer. Containers end a forward by
     * closing one and fall back to the other when it is refused (Jetty the stream, Tomcat the
     * writer); a capture that handed out both made Tomcat open a writer over a view's stream, which
     * named ISO-8859-1 in a {@code text/*} type the view had written UTF-8 bytes under.
     */
    @Override
    public ServletOutputStream getOutputStream() {
      if (writerTaken) {
        throw new IllegalStateException("getWriter() has already been called for this response");
      }
      streamTaken = true;
      return stream();
    }

    private ServletOutputStream stream() {
      if (stream == null) {
        stream = new ServletOutputStream() {
          @Override
          public void write(int b) throws IOException {
            if (take(1) == 1) {
              capture.write(b);
            }
          }

          @Override
          public void write(byte[] b, int off, int len) throws IOException {
            int n = take(len);
            if (n > 0) {
              capture.write(b, off, n);
            }
          }

          @Override
          public void flush() throws IOException {
            capture.flush();
          }

          /** Ends the answer, as closing the container's stream does; the guard sends it later. */
          @Override
          public void close() {
            ended = true;
          }

          @Override
          public boolean isReady() {
            return true;
          }

          @Override
          public void setWriteListener(WriteListener listener) {
            throw new IllegalStateException("guarded responses are written synchronously");
          }
        };
      }
      return stream;
    }

    /**
     * The writer encodes in the response's character encoding (ISO-8859-1 if none), and sets that
     * encoding on the response as the containers' {@code getWriter()} does, so that the stored and
     * replayed Content-Type names the charset the body is in ({@code text/plain;charset=ISO-8859-1}):
     * without it a client that defaults to UTF-8 reads the text wrong, first and on every replay.
     */
    @Override
    public PrintWriter getWriter() {
      if (streamTaken) {
        throw new IllegalStateException("getOutputStream() has already been called for this response");
      }
      if (writer == null) {
        String enc = getCharacterEncoding();
        Charset cs = enc == null ? StandardCharsets.ISO_8859_1 : Charset.forName(enc);
        if (!frozen() && namesCharset(getContentType())) {
          super.setCharacterEncoding(enc == null ? cs.name() : enc);
        }
        writer = new PrintWriter(new OutputStreamWriter(stream(), cs));
        writerCharset = cs;
      } else if (!writerTaken && !frozen() && namesCharset(getContentType())) {
        // Taken again after a reset, which cleared the charset: the body is still in the writer's.
        super.setCharacterEncoding(writerCharset.name());
      }
      writerTaken = true;
      return writer;
    }

    /**
     * Whether the containers' own {@code getWriter()} names its charset in this Content-Type: for
     * {@code text/*} and while none is set, Tomcat and Jetty both do. For other types (JSON, which
     * RFC 8259 gives no charset parameter) Jetty only assumes UTF-8 and names none, where Tomcat names
     * it; the filter runs on either, and follows Jetty there, as it did before it named any.
     */
    private static boolean namesCharset(String contentType) {
      return contentType == null || contentType.regionMatches(true, 0, "text/", 0, 5);
    }

    /**
     * Commits the status and headers, as the container's does (Servlet spec): later changes to
     * them are ignored and {@link #isCommitted()} is true. The body is still held until the guard
     * stored the answer, and writes go on to it until the answer ends.
     */
    @Override
    public void flushBuffer() throws IOException {
      finishWriting();
      capture.flush();
      flushed = true;
    }

    /**
     * How many of the next {@code len} body bytes the answer takes: none once it ended, and none
     * past a declared length; taking the last declared byte ends it.
     */
    private int take(int len) {
      if (ended) {
        return 0;
      }
      int n = declared < 0 ? len : (int) Math.min(len, Math.max(0, declared - written));
      written += n;
      if (declared > 0 && written >= declared) {
        ended = true;
      }
      return n;
    }

    /**
     * Takes a declared Content-Length (however set). A length the body has already reached is
     * taken as Tomcat takes it: body past it is cut off (Tomcat sends only the declared bytes) and,
     * if more than zero, the answer ends there. Jetty 12 neither ends nor cuts there (it answers
     * 500 for body past the length, and takes later changes when the body is exactly as long): one
     * wrapper cannot match both, and the first answer and every replay are this one, on any
     * container. The Servlet spec's closure of the response ("the amount of content specified ...
     * has been written") reads the same way as Tomcat.
     */
    private void declare(long len) {
      declared = len;
      if (len >= 0 && written > len) {
        capture.truncate((int) len);
        written = len;
      }
      if (len > 0 && written >= len) {
        ended = true;
      }
    }

    /**
     * Whether the answer ended. With a declared length, the text the writer's encoder still holds
     * is counted first: the container counts it when written, and the declared end may be in it.
     */
    private boolean ended() {
      if (!ended && declared >= 0) {
        flushWriter();
      }
      return ended;
    }

    /** Whether status and headers are final: the answer ended or {@link #flushBuffer()} committed them. */
    private boolean frozen() {
      return flushed || ended();
    }

    @Override
    public boolean isCommitted() {
      return frozen() || capture.spilled() || super.isCommitted();
    }

    @Override
    public void resetBuffer() {
      checkNotEnded();
      // The writer's encoder holds chars not yet in the capture: dropped with the rest.
      flushWriter();
      capture.reset();
      written = 0;
      super.resetBuffer();
    }

    @Override
    public void reset() {
      checkNotEnded();
      flushWriter();
      capture.reset();
      written = 0;
      declared = -1;
      super.reset();
      forgetOutput();
    }

    /**
     * Either the writer or the stream may be taken again, as after the containers' {@code reset()}
     * (and Jetty's forward): a handler that streamed an export, failed, reset and wrote its error
     * as text got a 500 instead. The writer itself is kept, as the containers keep theirs working:
     * a handler that holds it from before the reset still writes through it.
     */
    void forgetOutput() {
      writerTaken = false;
      streamTaken = false;
    }

    /** Captures the error status; the body written before it is dropped, as the container resets its buffer. */
    @Override
    public void sendError(int sc) {
      sendError(sc, null);
    }

    /** As {@link #sendError(int)}: the message would only go into the container's error page. */
    @Override
    public void sendError(int sc, String msg) {
      if (isCommitted()) {
        throw new IllegalStateException("cannot send an error: the response is committed");
      }
      resetBuffer();
      setStatus(sc);
      ended = true;
    }

    @Override
    public void sendRedirect(String location) {
      sendRedirect(location, 302, true);
    }

    // Servlet 6.1's overloads, without @Override since the module compiles against 6.0: there they
    // override the wrapper's, which send the redirect straight to the container, before the
    // answer is stored and without the held body.

    /**
     * Holds a redirect with this status, the buffer cleared (Servlet 6.1).
     *
     * @param location the {@code Location}
     * @param sc the status
     * @throws IllegalStateException if the response is committed
     */
    public void sendRedirect(String location, int sc) {
      sendRedirect(location, sc, true);
    }

    /**
     * Holds a 302 redirect (Servlet 6.1).
     *
     * @param location the {@code Location}
     * @param clearBuffer whether the body written so far is dropped
     * @throws IllegalStateException if the response is committed
     */
    public void sendRedirect(String location, boolean clearBuffer) {
      sendRedirect(location, 302, clearBuffer);
    }

    /**
     * Holds a redirect as the status and {@code Location} of the answer, dropping the body written
     * so far if {@code clearBuffer}, as the container would (Servlet 6.1).
     *
     * @param location the {@code Location}
     * @param sc the status
     * @param clearBuffer whether the body written so far is dropped
     * @throws IllegalStateException if the response is committed
     */
    public void sendRedirect(String location, int sc, boolean clearBuffer) {
      if (isCommitted()) {
        throw new IllegalStateException("cannot redirect: the response is committed");
      }
      if (clearBuffer) {
        resetBuffer();
      } else {
        // Text the writer's encoder still holds was written before the redirect: it stays.
        flushWriter();
      }
      setStatus(sc);
      setHeader("Location", location);
      ended = true;
    }

    // Status and header changes go to the container's response, which the guard has kept
    // uncommitted and whose status and headers it stores: once the answer ended they stop here.

    @Override
    public void setStatus(int sc) {
      if (!frozen()) {
        super.setStatus(sc);
      }
    }

    @Override
    public void setHeader(String name, String value) {
      if (!frozen()) {
        super.setHeader(name, value);
        declaredBy(name, value);
      }
    }

    @Override
    public void addHeader(String name, String value) {
      if (!frozen()) {
        super.addHeader(name, value);
        declaredBy(name, value);
      }
    }

    @Override
    public void setIntHeader(String name, int value) {
      if (!frozen()) {
        super.setIntHeader(name, value);
        declaredBy(name, Integer.toString(value));
      }
    }

    @Override
    public void addIntHeader(String name, int value) {
      if (!frozen()) {
        super.addIntHeader(name, value);
        declaredBy(name, Integer.toString(value));
      }
    }

    /**
     * A Content-Length header declares the length as setContentLength does (the containers treat it
     * so). The value is parsed as Tomcat and Jetty parse it, {@link Long#parseLong} as it is:
     * {@code " 2"} is no length there (Tomcat keeps it as a plain header, Jetty throws), so none
     * here. A null value removes the header and forgets the length, as Servlet 6.1, Tomcat 11 and
     * Jetty do (Tomcat 10.1 ignores the call and keeps the length; the guard does not follow it
     * there, so the first answer and its replays are the same on every container).
     */
    private void declaredBy(String name, String value) {
      if ("Content-Length".equalsIgnoreCase(name)) {
        long len = -1;
        try {
          len = value == null ? -1 : Long.parseLong(value);
        } catch (NumberFormatException notALength) {
          // Not a length the container would take either: nothing declared.
        }
        declare(len);
      }
    }

    @Override
    public void setDateHeader(String name, long date) {
      if (!frozen()) {
        super.setDateHeader(name, date);
      }
    }

    @Override
    public void addDateHeader(String name, long date) {
      if (!frozen()) {
        super.addDateHeader(name, date);
      }
    }

    @Override
    public void addCookie(Cookie cookie) {
      if (!frozen()) {
        super.addCookie(cookie);
      }
    }

    @Override
    public void setContentType(String type) {
      if (!frozen()) {
        super.setContentType(type);
      }
    }

    @Override
    public void setCharacterEncoding(String charset) {
      // After getWriter() the writer's encoding is fixed: the containers ignore the call then
      // (until a reset, which lets the handler choose again, say for the stream).
      if (!frozen() && !writerTaken) {
        super.setCharacterEncoding(charset);
      }
    }

    /**
     * Sets the character encoding as {@link #setCharacterEncoding(String)} does (Servlet 6.1). No
     * {@code @Override}, since the module compiles against 6.0: there the wrapper's sets it on the
     * container's response directly, also after the answer ended.
     *
     * @param charset the encoding
     */
    public void setCharacterEncoding(Charset charset) {
      setCharacterEncoding(charset.name());
    }

    @Override
    public void setContentLength(int len) {
      setContentLengthLong(len);
    }

    @Override
    public void setContentLengthLong(long len) {
      if (!frozen()) {
        super.setContentLengthLong(len);
        declare(len);
      }
    }

    @Override
    public void setLocale(Locale loc) {
      if (!frozen()) {
        super.setLocale(loc);
      }
    }

    @Override
    public void setBufferSize(int size) {
      checkNotEnded();
      super.setBufferSize(size);
    }

    @Override
    public void setTrailerFields(Supplier<Map<String, String>> supplier) {
      checkNotEnded();
      super.setTrailerFields(supplier);
    }

    private void checkNotEnded() {
      if (frozen()) {
        throw new IllegalStateException("the response is committed: sendRedirect, sendError, the declared"
            + " Content-Length written in full, the closed output stream or flushBuffer() already committed it");
      }
    }

    void finishWriting() throws IOException {
      flushWriter();
    }

    private void flushWriter() {
      if (writer != null) {
        writer.flush();
      }
    }
  }
}
