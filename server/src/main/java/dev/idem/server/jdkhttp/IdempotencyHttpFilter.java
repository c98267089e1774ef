package dev.idem.server.jdkhttp;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpPrincipal;
import dev.idem.server.spi.Admission;
import dev.idem.server.CapturedResponse;
import dev.idem.server.Claim;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.GuardRequest;
import dev.idem.server.GuardResponse;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.TransactionalHandler;
import dev.idem.server.internal.BoundedCapture;
import dev.idem.server.internal.RateLimitedLog;
import dev.idem.server.internal.RequestBody;
import dev.idem.server.internal.StoreReached;
import dev.idem.server.internal.TimeoutHeader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The idempotency guard as a {@link Filter} of the JDK's {@code com.sun.net.httpserver}:
 *
 * <pre>{@code
 * HttpContext orders = server.createContext("/orders", handler);
 * orders.getFilters().add(new IdempotencyHttpFilter(guard));
 * }</pre>
 *
 * <p>For a keyed request it reads the body (up to the guard's request cap), claims the operation
 * and hands the handler an exchange whose request body is those bytes and whose response is held
 * back, up to the capture cap, until the result is stored. A longer response is streamed (chunked)
 * once it passes the cap and is recorded without its body, also when the client goes away while
 * it streams (the handler's effect is done by then). The handler must finish its response before
 * {@code handle} returns; one that returns without {@code sendResponseHeaders} has failed: the
 * client gets a 500 and the claim is released, as when it throws. The JDK server has no async
 * processing the filter could see (unlike the Servlet filter's {@code startAsync}), so work a handler
 * hands to another thread is not tracked: when {@code handle} throws or returns without a status,
 * a retry runs the handler again, also beside such work. A handler whose effect happens off its
 * thread must wait for it before it answers.
 *
 * <p>The caller, for key scope, is the exchange's principal by default; requests without one are
 * {@code "anonymous"}. The JDK server runs a context's own filters before the context's
 * {@code Authenticator}, so this filter never sees the principal an {@code Authenticator} finds,
 * and its exchange would break the {@code Authenticator}: on a context with one, every request is
 * answered 500 ({@link IdempotencyGuard#failedResponse()}, nothing claimed) and the cause is logged
 * at ERROR. Authenticate in a {@link Filter} added before this one (it may set
 * {@code HttpExchange.setAttribute}), and pass the caller it found with
 * {@link #IdempotencyHttpFilter(IdempotencyGuard, Function)}. The handler finds its {@link Claim} in
 * the exchange attribute {@value Claim#ATTRIBUTE} (for {@link Claim#operationId()}) of the
 * exchange it is given; the filter holds it there itself, since the JDK's exchanges share their
 * context's attributes.
 *
 * <p>For a transactional route, {@link #inTransaction} makes the handler itself (no filter needed):
 *
 * <pre>{@code
 * server.createContext("/orders", idem.inTransaction(dataSource, (connection, claim, body) -> {
 *   // INSERT the order on connection
 *   return CapturedResponse.json(201, "{\"id\":\"" + claim.operationId() + "\"}");
 * }));
 * }</pre>
 *
 * <p>While the guard's store is down, every keyed request is answered 503, and the outage is
 * logged (at ERROR, on this class's logger) without flooding the log: the first failure with its
 * stack trace, then at most one line per 60 seconds (on the system clock) with the count of the
 * failures since the last line and the latest one's message, and one WARN with the last count once
 * requests get through again (with the first success an interval after the last line): only an
 * answer from the store counts as one, not an unkeyed request or a 400 for a missing key. Results
 * the store did not take (sent anyway, and stored later by the guard) are logged in the same way,
 * and so are the failures of {@link #inTransaction} handlers (a database that is down fails every
 * one; a handler's own failures are then also logged one line per interval, with the latest one's
 * message, after the first with its stack trace). Each filter instance counts its own.
 *
 * <p>Thread-safe.
 */
public final class IdempotencyHttpFilter extends Filter {
  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyHttpFilter.class);

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
  /**
   * The log of failed transactional routes: while their database is down every request fails so, so
   * this too is one line per interval, not one per request.
   */
  private final RateLimitedLog transactionFailed = new RateLimitedLog(LOG,
      "A transactional handler failed; its transaction was rolled back; answering 500",
      RateLimitedLog.DEFAULT_INTERVAL, Clock.systemUTC());
  /** A context with an Authenticator: refused, one line per interval. */
  private final RateLimitedLog authenticatorAfterGuard = new RateLimitedLog(LOG,
      "IdempotencyHttpFilter cannot guard a context with an Authenticator; answering 500",
      RateLimitedLog.DEFAULT_INTERVAL, Clock.systemUTC());
  private final Function<HttpExchange, String> caller;

  /**
   * A filter that scopes keys by the exchange's principal.
   *
   * @param guard the guard; the filter does not close it
   */
  public IdempotencyHttpFilter(IdempotencyGuard guard) {
    this(guard, e -> e.getPrincipal() == null ? null : e.getPrincipal().getName());
  }

  /**
   * A filter with its own idea of the caller.
   *
   * @param guard the guard; the filter does not close it
   * @param caller the caller of an exchange (an account or tenant id, never a credential); null
   *     means {@code "anonymous"}
   */
  public IdempotencyHttpFilter(IdempotencyGuard guard, Function<HttpExchange, String> caller) {
    this.guard = Objects.requireNonNull(guard, "the filter's guard is null; build one with"
        + " IdempotencyGuard.builder(store).build()");
    this.caller = Objects.requireNonNull(caller, "caller");
  }

  @Override
  public String description() {
    return "Idem idempotency guard (" + guard.keyHeader() + ")";
  }

  @Override
  public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
    if (exchange.getHttpContext().getAuthenticator() != null) {
      // The JDK server runs a context's own filters before its Authenticator (a system filter): the
      // guard would see no principal, store the Authenticator's 401 challenge as a key's answer, and
      // hand the Authenticator its capturing exchange, which it casts to the JDK's own class and
      // fails on (no answer at all). Nothing is claimed; every request says so until it is fixed.
      authenticatorAfterGuard.failed(new IllegalStateException("the context " + exchange.getHttpContext().getPath()
          + " has an Authenticator, which the JDK server runs after this filter; authenticate in a Filter added"
          + " before this one instead, and pass the caller it found to new IdempotencyHttpFilter(guard, caller)"));
      exchange.getResponseHeaders().set("Connection", "close"); // its body is left unread
      send(exchange, guard.failedResponse());
      return;
    }
    BodyRead read = new BodyRead();
    GuardRequest request = guardRequest(exchange, read);
    Admission admission;
    try {
      admission = guard.admit(request);
    } catch (IdempotencyStoreException e) {
      storeDown.failed(e);
      answer(exchange, read, guard.unavailableResponse());
      return;
    }
    if (StoreReached.by(admission)) {
      // Only an answer from the store says it is back: not an unkeyed GET, nor a 400 for a missing key.
      storeDown.succeeded();
    }
    if (admission instanceof Admission.Unguarded) {
      chain.doFilter(exchange);
    } else if (admission instanceof Admission.Respond r) {
      answer(exchange, read, r.response());
    } else {
      run(exchange, chain, (Admission.Proceed) admission);
    }
  }

  /**
   * The guard's view of an exchange, as this filter reads it (key header, caller, stated timeout),
   * for a handler that calls the guard itself.
   *
   * @param exchange the exchange; its body is read only if the guard needs it
   * @return the request for {@link IdempotencyGuard#admit} or {@link IdempotencyGuard#inTransaction}
   */
  public GuardRequest guardRequest(HttpExchange exchange) {
    return guardRequest(Objects.requireNonNull(exchange, "exchange"), new BodyRead());
  }

  private GuardRequest guardRequest(HttpExchange exchange, BodyRead read) {
    URI uri = exchange.getRequestURI();
    Headers headers = exchange.getRequestHeaders();
    List<String> keyValues = headers.getOrDefault(guard.keyHeader(), List.of());
    String timeoutHeader = guard.requestTimeoutHeader();
    return new GuardRequest(exchange.getRequestMethod(), uri.getRawPath(), uri.getRawQuery(),
        headers.getFirst("Content-Type"), keyValues, caller.apply(exchange),
        limit -> read.read(exchange, limit),
        timeoutHeader == null ? null : TimeoutHeader.parse(headers.getFirst(timeoutHeader)));
  }

  /**
   * A handler for a transactional route: for each exchange, {@link IdempotencyGuard#inTransaction}
   * with a connection from {@code dataSource}, then the answer. If the handler throws, its
   * transaction has rolled back, the exchange gets a 500 problem, and a retry runs it again.
   *
   * @param dataSource connections to the database of the guard's records
   * @param handler the business action
   * @return the handler to give {@code createContext}
   */
  public HttpHandler inTransaction(DataSource dataSource, TransactionalHandler handler) {
    Objects.requireNonNull(dataSource, "dataSource");
    Objects.requireNonNull(handler, "handler");
    return exchange -> {
      BodyRead read = new BodyRead();
      GuardResponse answer;
      try {
        answer = guard.inTransaction(dataSource, guardRequest(exchange, read), handler);
        // Not an unkeyed shortcut: the DataSource gave a connection for every answer, so what failed
        // (no connection, a thrown handler) no longer does for this request.
        transactionFailed.succeeded();
      } catch (SQLException | RuntimeException e) {
        transactionFailed.failed(e);
        answer = guard.failedResponse();
      }
      answer(exchange, read, answer);
    };
  }

  private void run(HttpExchange exchange, Chain chain, Admission.Proceed p) throws IOException {
    CapturingExchange capture = new CapturingExchange(exchange, p.body(), p.claim(), guard.maxCapturedBody());
    try {
      chain.doFilter(exchange instanceof HttpsExchange https ? new SecureExchangeView(capture, https) : capture);
    } catch (IOException | RuntimeException | Error e) {
      // Not when no status was sent: then the spill itself refused, as the JDK's own stream would.
      if (capture.capture.outputFailed() && capture.statusSent()) {
        recordWithoutBody(p.claim(), capture.status(), exchange.getResponseHeaders(), e);
      } else {
        try {
          guard.abandon(p.claim());
        } catch (RuntimeException release) {
          e.addSuppressed(release);
        }
      }
      throw e;
    }
    if (!capture.statusSent()) {
      // Without the guard the client would get no answer; a made-up 200 stored for replay would
      // tell it and every retry that the operation succeeded, which the handler never said.
      LOG.error("The handler of {} returned without sendResponseHeaders; answering 500, and a retry runs it again",
          p.claim());
      try {
        guard.abandon(p.claim());
      } catch (IdempotencyStoreException e) {
        LOG.error("Could not release {}; it is tried again in the background, and a retry of its key gets 409"
            + " meanwhile", p.claim(), e);
      }
      exchange.getResponseHeaders().clear();
      send(exchange, guard.failedResponse());
      return;
    }
    byte[] held = capture.capture.held();
    CompletionResult result;
    try {
      // The headers as they are, not a copy: the guard keeps only its allowlist, before any change.
      result = guard.complete(p.claim(), new CapturedResponse(capture.status(), exchange.getResponseHeaders(), held));
      resultNotStored.succeeded();
    } catch (IdempotencyStoreException e) {
      // The effect exists; the guard keeps the lease and tries the store again in the background.
      LOG.debug("Could not store the result of {}", p.claim());
      resultNotStored.failed(e);
      result = CompletionResult.STORED;
    }
    if (capture.capture.spilled()) {
      exchange.close();
    } else if (result == CompletionResult.REFUSED) {
      exchange.getResponseHeaders().clear();
      send(exchange, guard.refusedResponse());
    } else {
      sendBody(exchange, capture.status(), held);
    }
  }

  /**
   * The client went away while an over-cap body streamed: the handler had made its effect and its
   * status had gone out, so the failure is the client's, not the handler's. Recorded as an over-cap
   * response (body omitted); releasing the claim instead would let the client's retry run the
   * effect again.
   */
  private void recordWithoutBody(Claim claim, int status, Headers headers, Throwable failure) {
    LOG.info("The client of {} went away while its over-cap response streamed; storing the result without"
        + " its body", claim);
    try {
      guard.complete(claim, new CapturedResponse(status, headers, null));
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  /**
   * Sends one of the guard's responses (a replay, a refusal, a transactional route's answer) and
   * closes the exchange.
   *
   * @param exchange the exchange, its response not yet started
   * @param g what to send
   * @throws IOException if writing fails
   */
  public static void send(HttpExchange exchange, GuardResponse g) throws IOException {
    Headers h = exchange.getResponseHeaders();
    g.headers().forEach((name, values) -> h.put(name, new ArrayList<>(values)));
    sendBody(exchange, g.status(), g.body());
  }

  /** Sends a guard's answer to an exchange whose body the guard may have left unread. */
  private static void answer(HttpExchange exchange, BodyRead read, GuardResponse g) throws IOException {
    if (read.mayBeCutOff(exchange.getRequestHeaders())) {
      exchange.getResponseHeaders().set("Connection", "close");
    }
    send(exchange, g);
  }

  private static void sendBody(HttpExchange exchange, int status, byte[] body) throws IOException {
    exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  /**
   * Whether the guard read an exchange's body to its end. The JDK's server reads at most its
   * {@code sun.net.httpserver.drainAmount} (64 KiB by default) of a body left unread before it
   * reuses the connection; past that it resets the connection after the answer, which does not say
   * so, and the client's next request on it fails. An answer that may leave more than that unread
   * says {@code Connection: close}. Not an exchange attribute: on JDK 17 those are shared by every
   * exchange of the context.
   */
  private static final class BodyRead {
    private static final long JDK_DRAIN = Long.getLong("sun.net.httpserver.drainAmount", 64 * 1024);

    private boolean toEnd;

    byte[] read(HttpExchange exchange, int limit) throws IOException {
      Headers headers = exchange.getRequestHeaders();
      long declared = RequestBody.declaredLength(headers.getFirst("Content-Length"), headers.getFirst("Transfer-Encoding"));
      byte[] body = RequestBody.read(exchange.getRequestBody(), declared, limit);
      toEnd = declared >= 0 ? body.length == declared : body.length < limit;
      return body;
    }

    boolean mayBeCutOff(Headers headers) {
      if (toEnd) {
        return false;
      }
      if (headers.getFirst("Transfer-Encoding") != null) {
        return true;
      }
      long declared = RequestBody.declaredLength(headers.getFirst("Content-Length"), null);
      return declared > JDK_DRAIN;
    }
  }

  /** The exchange as the handler sees it: the guard's body, and a response held back. */
  private static final class CapturingExchange extends HttpExchange {
    private final HttpExchange real;
    private final InputStream body;
    /**
     * The handler's claim, held here: on JDK 17 an exchange's attributes are its context's,
     * shared by every exchange on it, so a claim set there reached other requests' handlers.
     */
    private final Claim claim;
    final BoundedCapture capture;
    private int status = -1;

    CapturingExchange(HttpExchange real, byte[] body, Claim claim, int cap) {
      this.real = real;
      this.body = new ByteArrayInputStream(body);
      this.claim = claim;
      // Past the cap: send the status now, chunked, and stream the rest.
      this.capture = new BoundedCapture(cap, () -> {
        if (!statusSent()) {
          throw new IOException("response headers not sent yet"); // as the JDK's own stream says
        }
        real.sendResponseHeaders(status, 0);
        return real.getResponseBody();
      });
    }

    boolean statusSent() {
      return status >= 0;
    }

    /** @return the status the handler sent; check {@link #statusSent()} first */
    int status() {
      return status;
    }

    @Override
    public Headers getRequestHeaders() {
      return real.getRequestHeaders();
    }

    @Override
    public Headers getResponseHeaders() {
      return real.getResponseHeaders();
    }

    @Override
    public URI getRequestURI() {
      return real.getRequestURI();
    }

    @Override
    public String getRequestMethod() {
      return real.getRequestMethod();
    }

    @Override
    public HttpContext getHttpContext() {
      return real.getHttpContext();
    }

    /** Does not close the real exchange: the filter still has to store and send the result. */
    @Override
    public void close() {}

    @Override
    public InputStream getRequestBody() {
      return body;
    }

    @Override
    public OutputStream getResponseBody() {
      return capture;
    }

    @Override
    public void sendResponseHeaders(int rCode, long responseLength) throws IOException {
      if (status >= 0) {
        throw new IOException("headers already sent");
      }
      status = rCode;
    }

    @Override
    public InetSocketAddress getRemoteAddress() {
      return real.getRemoteAddress();
    }

    @Override
    public int getResponseCode() {
      return status;
    }

    @Override
    public InetSocketAddress getLocalAddress() {
      return real.getLocalAddress();
    }

    @Override
    public String getProtocol() {
      return real.getProtocol();
    }

    @Override
    public Object getAttribute(String name) {
      return Claim.ATTRIBUTE.equals(name) ? claim : real.getAttribute(name);
    }

    @Override
    public void setAttribute(String name, Object value) {
      if (Claim.ATTRIBUTE.equals(name)) {
        throw new IllegalArgumentException(name + " is the guard's; it cannot be replaced");
      }
      real.setAttribute(name, value);
    }

    @Override
    public void setStreams(InputStream i, OutputStream o) {
      throw new UnsupportedOperationException("a filter after the idempotency guard cannot replace its streams");
    }

    @Override
    public HttpPrincipal getPrincipal() {
      return real.getPrincipal();
    }
  }
}
