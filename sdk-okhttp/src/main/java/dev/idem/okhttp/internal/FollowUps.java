package dev.idem.okhttp.internal;

import dev.idem.core.Classification;
import dev.idem.core.ProtocolStatuses;
import dev.idem.core.Verdict;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.adapter.SentBefore;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Authenticator;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;

/**
 * Sends one keyed attempt down the chain as exactly one request on the wire. OkHttp's
 * {@code RetryAndFollowUpInterceptor}, below every application interceptor, would otherwise send
 * more requests than the journal has attempts: a silent retry of a broken connection, a repeat of
 * a 408, of a 421 or of a 503 with {@code Retry-After: 0}, a re-send to an {@link Authenticator}'s
 * credentials, a redirect. For each keyed attempt (a live call's, a resumed one's, an enqueued
 * one's):
 * <ul>
 *   <li>the chain below runs with {@code retryOnConnectionFailure} off and no {@link Authenticator}
 *       (the client's settings stay as they are for every other call);</li>
 *   <li>the body is {@linkplain AttemptBody one-shot}: OkHttp never sends a one-shot body twice, so
 *       no follow-up that repeats the request (307, 308, 503, 408, 421, an authenticator's or proxy
 *       authenticator's re-send) goes out, even on a client that only has the interceptor;</li>
 *   <li>the attempt carries a {@link KeyedAttempt} tag, by which {@link FollowUpGuard} (on clients
 *       that have it) stops the follow-ups a one-shot body does not: a 301, 302 or 303 followed by a
 *       bodyless GET, and any follow-up of a bodyless request.</li>
 * </ul>
 * The response that comes back is the attempt's own answer, with the headers the guard held back
 * from OkHttp put back. Stateless.
 */
final class FollowUps {
  private FollowUps() {}

  /**
   * Sends {@code attempt} as one request.
   *
   * @param chain the chain of the call (the live call's, or a resumed attempt's own)
   * @param attempt the attempt, with its key header; made a {@linkplain #keyed keyed} one here
   *     unless it is one already
   * @param support the adapter's rules, for an attempt made a keyed one here
   * @return the attempt's response, as the server sent it
   * @throws RequestNotSentException if the chain below failed before the attempt's body was
   *     written (an interceptor whose token refresh failed, a refused connection), unless the
   *     attempt carries {@code Expect: 100-continue} or its head was being written on an HTTP/2
   *     connection (see {@link AttemptBody})
   * @throws IOException as {@code chain.proceed} does, or {@link FollowUpRefusedException}
   */
  static Response proceed(Interceptor.Chain chain, Request attempt, AdapterSupport support) throws IOException {
    KeyedAttempt tag = attempt.tag(Tags.KEYED_ATTEMPT);
    if (tag == null) {
      tag = new KeyedAttempt(support);
      attempt = keyed(attempt.newBuilder(), attempt.method(), attempt.body(), tag);
    }
    // This attempt is its own OkHttp call (resumed, enqueued by the call factory), so whatever is
    // thrown here is all the executor learns of it: as is, an IOException or OkHttp's wrapping of a
    // RuntimeException counts as an ambiguous attempt, and the operation ends UNCERTAIN though
    // nothing was sent. Before the body was written the server cannot have seen the request
    // (unless its head went first: Expect: 100-continue, HTTP/2; see AttemptBody).
    AttemptBody body = attempt.body() instanceof AttemptBody b ? b : null;
    try {
      return proceed(chain, attempt, tag);
    } catch (RequestNotSentException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      if (chain.call().isCanceled()) {
        throw e;  // the caller went away: the cancellation, not the attempt, decides
      }
      RequestNotSentException notSent = notSent(body, e);
      if (notSent != null) {
        throw notSent;
      }
      throw e;
    }
  }

  /**
   * {@code e} itself, or, if a request head of the attempt had begun, {@code e} with the type by
   * which Idem's default table would call it not sent hidden ({@link SentBefore#hidden}). A refused
   * connect, an unknown host, no route, a connect timeout after the head come from a later
   * connection: OkHttp following a 303 with a GET on a client without {@link FollowUpGuard}, an
   * interceptor below Idem that proceeds again or fails over through a client of its own. Before,
   * such an attempt was SAFE and the operation FAILED although the server had the keyed request.
   *
   * <p>No exception. Not after an answer that proves no effect (a 503): a failover interceptor's own
   * client may have sent the request to a standby that read it before the failure came. Not a TLS
   * handshake failure of the call's own exchange, though a mutual-TLS server that refuses the
   * client's certificate after a TLS 1.3 client finished its side never passed the request on: a
   * TLS 1.2 server that renegotiates for a client certificate after its application read the
   * request (IIS, Kestrel's delayed certificate, Apache's per-location client auth) fails the same
   * exchange with the same exception, and a failover interceptor can rethrow either. So a mutual-TLS
   * refusal after the head is AMBIGUOUS: on the safe side, and the operation can be sent again with
   * its key once the certificate is fixed.
   */
  static IOException typeHiddenIfSentBefore(KeyedAttempt tag, IOException e) {
    if (!tag.headWasStarted() || !SentBefore.typedNotSent(e)) {
      return e;
    }
    return SentBefore.hidden(e, "a request head of this keyed attempt had gone out");
  }

  /**
   * The failure {@code e} of an attempt as a request not sent, if nothing of {@code body} was
   * written; null if it was, or if there is no body to tell by (a bodyless request counts as sent:
   * its headers may have been all there was), or if the body does not tell (a
   * {@linkplain AttemptBody#headFirst head-first} one: sent with {@code Expect: 100-continue}, or
   * whose head OkHttp started writing on an HTTP/2 connection).
   */
  static RequestNotSentException notSent(AttemptBody body, Exception e) {
    // refuse(), not a look at written(): the verdict holds only if nothing can write the body later.
    if (body == null || !body.refuse()) {
      return null;
    }
    return new RequestNotSentException("the OkHttp chain threw " + e.getClass().getName() + " (" + e.getMessage()
        + ") before the request body was written, so the server cannot have acted on this attempt", e);
  }

  /**
   * The failure {@code e} as an attempt the server did not act on, if it is {@link FollowUpGuard}'s
   * refusal of a second request and the attempt's only request on the wire was answered with a
   * status that proves no effect; null otherwise. That is the usual token-refresh interceptor below
   * Idem (the README puts credentials there): on a 401 it refreshes and proceeds again, the guard
   * refuses that (one request per attempt), and the attempt's answer is the 401, on which the
   * server did nothing. Counting it as ambiguous would make a later permanent refusal (a 402)
   * UNCERTAIN; as a request not acted on it is retried with the same key (a journaled attempt of its
   * own, after the policy's backoff), through the app's interceptor again, now with the new token.
   * The answer is judged as the executor judges an attempt's (its status and headers; the body is
   * gone): the protocol's key-reused or in-flight answer keeps the attempt ambiguous, and otherwise
   * the executor's own classifier decides. Only its PERMANENT, TRANSIENT or SAFE proves no effect;
   * SUCCESS, AMBIGUOUS (an app that calls a mesh's 503 ambiguous), no opinion, or a classifier that
   * throws keeps the attempt ambiguous, so the app's classifier is never overruled towards FAILED.
   */
  static RequestNotSentException answeredWithoutEffect(KeyedAttempt tag, Throwable e) {
    boolean refused = false;
    Throwable t = e;
    for (int depth = 0; t != null && depth < 16 && !refused; depth++, t = t.getCause()) {
      refused = t instanceof FollowUpRefusedException;
    }
    Response answer = refused ? tag.firstAnswer() : null;
    if (answer == null) {
      return null;
    }
    ResponseSnapshot snapshot = new ResponseSnapshot(answer.code(),
        AdapterSupport.headerLines(answer.headers().size(), answer.headers()::name, answer.headers()::value),
        new byte[0]);
    if (!provesNoEffect(tag.support(), snapshot)) {
      return null;
    }
    return new RequestNotSentException("the only request of this keyed attempt on the wire was answered HTTP "
        + answer.code() + ", which proves no effect, and Idem refused the second request an interceptor below it"
        + " tried (a credential refresh?): one request per attempt. Idem sends the operation again with the same"
        + " key, as a journaled attempt of its own", e);
  }

  /** Whether the executor of {@code support} would take {@code answer} as having had no effect. */
  private static boolean provesNoEffect(AdapterSupport support, ResponseSnapshot answer) {
    ProtocolStatuses protocol = support.executor().protocol();
    if (protocol.isKeyReused(answer) || protocol.isInFlight(answer)) {
      return false;
    }
    if (protocol.isKeyMissing(answer)) {
      return true;  // the executor's own verdict on it is PERMANENT
    }
    Optional<Verdict> v;
    try {
      v = support.executor().classifier().classify(answer);
    } catch (RuntimeException | LinkageError | AssertionError e) {
      return false;  // the app's classifier failed: nothing proves the answer had no effect
    }
    if (v == null || v.isEmpty()) {
      return false;
    }
    Classification c = v.get().classification();
    return c == Classification.PERMANENT || c == Classification.TRANSIENT || c == Classification.SAFE;
  }

  /**
   * A failure to build an attempt's request (OkHttp's builders refuse a URL, header or method/body
   * pair the journaled request has), as the request not sent that it is: nothing of it can have
   * reached the network, so it must not count as an ambiguous attempt, which would end the
   * operation UNCERTAIN though the server never saw it.
   */
  static RequestNotSentException notBuilt(RuntimeException e) {
    // The class only: OkHttp's message may quote a journaled header's value.
    return new RequestNotSentException("OkHttp could not build this attempt's request (" + e.getClass().getName()
        + "), so nothing of it was sent", e);
  }

  /**
   * {@link #proceed(Interceptor.Chain, Request)} for an attempt built by {@link #keyed} with
   * {@code tag}, which is not looked up again (OkHttp's tag look-up allocates).
   */
  static Response proceed(Interceptor.Chain chain, Request attempt, KeyedAttempt tag) throws IOException {
    Response response;
    try {
      // Before anything goes down: only the call's listener sees the request OkHttp writes, after
      // every interceptor (an Expect: 100-continue header no interceptor of Idem's saw), and the
      // connection it goes on (HTTP/2 puts the head on the wire before the body).
      HeadFirstWatch.watch(chain.call(), tag);
      response = once(chain).proceed(attempt);
    } catch (IOException | RuntimeException e) {
      RequestNotSentException noEffect = answeredWithoutEffect(tag, e);
      if (noEffect != null) {
        throw noEffect;
      }
      if (e instanceof IOException io) {
        throw typeHiddenIfSentBefore(tag, io);
      }
      throw e;
    }
    if (response.priorResponse() != null) {
      // OkHttp already sent a follow-up of its own: on a client without FollowUpGuard, a 301, 302
      // or 303 turned into a GET, or, when an interceptor below Idem replaced the one-shot body
      // (signing, gzip), a 307 or 308 re-sent with the key, possibly to another host. That request
      // is out and may have taken effect; its answer is not this attempt's, and recording it as
      // such would tell the caller what the journal does not know. The attempt is ambiguous.
      response.close();
      throw new FollowUpRefusedException("OkHttp followed up a keyed attempt (" + attempt.method() + " "
          + attempt.url().redact() + ") with another request (" + response.request().method() + " "
          + response.request().url().redact() + ") before Idem could stop it: the client lacks the network"
          + " interceptor IdemOkHttp.install adds, and the follow-up was a GET or the attempt's body was replaced"
          + " below Idem. The attempt counts as ambiguous; build the client with IdemOkHttp.install");
    }
    try {
      return tag.restore(response);
    } catch (RuntimeException | Error e) {
      // Whatever is thrown here counts as an ambiguous attempt, whose response nobody else will
      // see: its body holds the connection, which would otherwise never go back to the pool.
      response.close();
      throw e;
    }
  }

  /**
   * {@code chain} with {@code retryOnConnectionFailure} off and no {@link Authenticator}. Each
   * {@code with} copies the chain, so a setting the client already has is not set again.
   */
  private static Interceptor.Chain once(Interceptor.Chain chain) {
    Interceptor.Chain once = chain;
    if (once.getRetryOnConnectionFailure()) {
      once = once.withRetryOnConnectionFailure(false);
    }
    if (once.getAuthenticator() != Authenticator.NONE) {
      once = once.withAuthenticator(Authenticator.NONE);
    }
    return once;
  }

  /**
   * Builds a keyed attempt: {@code tag}, a fresh {@link KeyedAttempt}, and {@code body} (if any) wrapped in
   * an {@link AttemptBody} unless it is one already. Callers that build the attempt anyway add
   * these in the same copy of the request, instead of {@link #proceed} copying it once more. The
   * tag counts the requests of one pass through the chain, so it is made for each pass.
   */
  static Request keyed(Request.Builder b, String method, RequestBody body, KeyedAttempt tag) {
    b.tag(Tags.KEYED_ATTEMPT, tag);
    if (body != null && !(body instanceof AttemptBody)) {
      b.method(method, new AttemptBody(body));
    }
    Request attempt = b.build();
    if (attempt.body() instanceof AttemptBody sent) {
      tag.body(sent);
      if (expectsContinue(attempt)) {
        // Before anyone else has the body: it starts as one whose head may be acted on alone, so
        // no cancel or failure can call the attempt not sent (see AttemptBody). (A body already
        // refused is one whose attempt was recorded as not sent; it is never written.)
        sent.headFirst();
      }
    }
    return attempt;
  }

  /**
   * Whether OkHttp sends {@code request}'s headers and waits for the server's answer before it
   * writes the body: an {@code Expect: 100-continue} header (name and value in any case), which
   * OkHttp's {@code CallServerInterceptor} honours for HTTP/1.1 and HTTP/2 alike. Any value of the
   * header counts, not only the last one OkHttp looks at: erring this way only makes a failure
   * ambiguous.
   */
  static boolean expectsContinue(Request request) {
    if (request.header("Expect") == null) {
      return false;  // nearly every request: asked twice per attempt, and headers(name) makes a list
    }
    for (String value : request.headers("Expect")) {
      if (value.trim().equalsIgnoreCase("100-continue")) {
        return true;
      }
    }
    return false;
  }

  /**
   * A keyed attempt's body: one-shot, so that OkHttp never writes it twice, and the one place that
   * decides whether the attempt was sent. The premise: before its body is written the server
   * cannot have processed the request (OkHttp's HTTP/1.1 exchange buffers the headers and flushes
   * them with the body, and a server cannot act on a request whose non-empty body it never got).
   * But "not written yet" is only a verdict once nothing can write it afterwards: a cancel's look
   * followed by OkHttp's dispatcher promoting the call would record as not sent a request that then
   * goes out. So the body moves once, atomically, from not started either to
   * {@linkplain #refuse refused} (the attempt is not sent, and a later write fails with an
   * IOException before a byte of it) or to writing (the attempt may have been sent).
   *
   * <p>{@code Expect: 100-continue} breaks the premise: OkHttp flushes the headers, key included,
   * and waits for the server's answer before it writes a byte of the body, and a server that acts
   * on the headers (a handler that never reads the body runs once they arrive) may apply the
   * request in that wait, which is its whole processing time. Such a body is made
   * {@linkplain #headFirst head-first} before it can be refused: it is never refused, and every
   * failure or cancel of its attempt is ambiguous, as a bodyless request's is. {@link FollowUps#keyed}
   * does so for an attempt that carries the header; {@link FollowUpGuard} for one whose header an
   * application interceptor below Idem added, before the request reaches the network; and
   * {@link HeadFirstWatch}, the call's event listener, for the request OkHttp finally writes
   * (a header a network interceptor added, on any client), before its head is flushed.
   *
   * <p>HTTP/2 breaks it too: OkHttp writes the HEADERS frame into the connection's shared frame
   * writer before the body, and anything that flushes the writer (another stream's frames, the
   * RST_STREAM sent when this stream's body fails) puts the head, key included, on the wire, where
   * a server that dispatches on HEADERS may act on it. {@link HeadFirstWatch} makes the body
   * head-first just before OkHttp starts writing the head on a connection that is not HTTP/1.x;
   * before that (no connection yet, a refused one) the rule holds on any protocol. Thread-safe.
   */
  static final class AttemptBody extends RequestBody {
    private static final int NOT_STARTED = 0;
    private static final int WRITING = 1;
    private static final int REFUSED = 2;
    /** The request's head may be acted on before (or without) its body: never refused. */
    private static final int HEAD_FIRST = 3;

    private final RequestBody delegate;
    private final AtomicInteger state = new AtomicInteger(NOT_STARTED);

    AttemptBody(RequestBody delegate) {
      this.delegate = delegate;
    }

    /**
     * Makes sure nothing of the body is ever written, if nothing of it was: true if it never will be
     * (refused now or before), false if writing it started and the request may have gone out.
     */
    boolean refuse() {
      return state.compareAndSet(NOT_STARTED, REFUSED) || state.get() == REFUSED;
    }

    /**
     * Makes the body one that is never refused, because its request's head goes out (and may be
     * acted on) before it is written ({@code Expect: 100-continue}): true if it now is one (or
     * writing it started), false if it was refused already, when the attempt is recorded as not
     * sent and its head must not go out either.
     */
    boolean headFirst() {
      return state.compareAndSet(NOT_STARTED, HEAD_FIRST) || state.get() != REFUSED;
    }

    @Override
    public MediaType contentType() {
      return delegate.contentType();
    }

    @Override
    public long contentLength() throws IOException {
      return delegate.contentLength();
    }

    @Override
    public boolean isOneShot() {
      return true;
    }

    @Override
    public void writeTo(BufferedSink sink) throws IOException {
      if (!state.compareAndSet(NOT_STARTED, WRITING) && state.get() == REFUSED) {
        // The attempt was already recorded as not sent (its timeout cancelled it while it waited
        // for a dispatcher slot, say): nothing of it may go out now.
        throw new IOException("this keyed attempt was cancelled and recorded as not sent before its body was"
            + " written; it is not sent now");
      }
      delegate.writeTo(sink);
    }
  }
}
