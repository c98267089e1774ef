package dev.idem.httpclient.internal;

import dev.idem.core.spi.ResponseSnapshot;
import java.net.Authenticator;
import java.net.PasswordAuthentication;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The client that keyed attempts go out through, so that each attempt is exactly one request on
 * the wire. java.net.http has no per-request switch for the follow-ups a client makes on its own:
 * with {@code Redirect.NORMAL} or {@code ALWAYS} it re-sends a POST answered 307 or 308 to the new
 * location and follows a 301, 302 or 303 with a GET; with an {@link Authenticator} it re-sends a
 * request answered 401 with credentials. Each is a request the journal never sees.
 *
 * <p>So a keyed attempt goes through:
 * <ul>
 *   <li>the app's client itself, when it does none of that ({@code Redirect.NEVER}, the JDK's
 *       default, and no authenticator): nothing changes;</li>
 *   <li>otherwise, for a client of the JDK's own implementation, a twin built once, on first use,
 *       from the app's client's settings (version, connect timeout, proxy, TLS context and
 *       parameters, cookie handler, executor) with {@code Redirect.NEVER} and an authenticator that
 *       answers the proxy's challenges only (a 407 means the request did not reach the server) and
 *       never the server's (the 401 is the attempt's answer; the JDK client keeps nothing of it but
 *       its status and challenge, so that is what the caller and the journal get). The JDK offers
 *       no getter for a local
 *       address or a stream priority, so the twin has the defaults. It has its own connection
 *       pool; the Idem client's {@code shutdown} and {@code shutdownNow} (Java 21+) stop it with the
 *       app's client, and its {@code close} closes it (Java 21+), each after stopping the keyed
 *       calls that go through it (see {@link CallEngine#shutdown()}); a twin built after one of
 *       them (by a resume) gets it as it is built ({@link #stop}). The Idem client has terminated
 *       only once the twin has too ({@link #isTerminated});</li>
 *   <li>a client of another implementation (a decorator) that follows redirects or authenticates
 *       is refused when the Idem client is built ({@link #check}): a twin would bypass what it
 *       adds, and its follow-ups cannot be stopped.</li>
 * </ul>
 * Calls Idem passes through always use the app's client, redirects and authenticator included.
 *
 * <p>Thread-safe.
 */
public final class KeyedClient {
  private final HttpClient app;
  private final boolean needsTwin;
  private volatile HttpClient twin;
  /**
   * The lifecycle method ({@code shutdown}, {@code shutdownNow}, {@code close}) last forwarded by
   * {@link #stop}, or null; guarded by this. A twin built after it gets it too.
   */
  private String stopped;

  private KeyedClient(HttpClient app) {
    this.app = app;
    this.needsTwin = followsUp(app);
  }

  /**
   * The keyed client for {@code app}.
   *
   * @param app the app's client
   * @return the holder
   * @throws IllegalArgumentException see {@link #check}
   */
  public static KeyedClient of(HttpClient app) {
    check(app);
    return new KeyedClient(app);
  }

  /**
   * Refuses a client whose follow-ups Idem can neither turn off nor mirror.
   *
   * @param app the app's client
   * @throws IllegalArgumentException if it follows redirects or has an authenticator and is not
   *     the JDK's own implementation
   */
  public static void check(HttpClient app) {
    if (followsUp(app) && !isJdkClient(app)) {
      throw new IllegalArgumentException("the delegate (" + app.getClass().getName() + ") follows redirects ("
          + app.followRedirects() + ") or has an authenticator, and is not the JDK's own HttpClient, so Idem can"
          + " neither stop those follow-ups for keyed calls nor build a twin without them; every request on the"
          + " wire must be a journaled attempt. Give Idem a delegate built with Redirect.NEVER and no"
          + " authenticator (set credentials as a header)");
    }
  }

  /**
   * The client for keyed attempts.
   *
   * @return the app's client, or its twin without follow-ups
   */
  public HttpClient get() {
    if (!needsTwin) {
      return app;
    }
    HttpClient t = twin;
    if (t == null) {
      String stop = null;
      synchronized (this) {
        t = twin;
        if (t == null) {
          t = twinOf(app);
          twin = t;
          stop = stopped;
        }
      }
      if (stop != null) {
        // Built after the Idem client stopped (a resume, or a keyed call that passed the
        // engine's check as the stop came): left running, it would send for a client that was
        // shut down or closed, and never terminate. Outside the lock: close() waits.
        Lifecycle.call(t, stop);
      }
    }
    return t;
  }

  /**
   * Forwards a lifecycle method of the Idem client to the twin: to the one built already, and to
   * one built later, as soon as it is built. Does nothing to the app's client. On Java 17 to 20,
   * where a client cannot be stopped, nothing happens.
   *
   * @param method {@code shutdown}, {@code shutdownNow} or {@code close}
   */
  public void stop(String method) {
    HttpClient t;
    synchronized (this) {
      stopped = method;
      t = twin;
    }
    if (t != null) {
      Lifecycle.call(t, method);
    }
  }

  /**
   * Whether the twin has terminated (Java 21+): true if none was built, since nothing went through
   * it, and false before Java 21.
   *
   * @return the twin's {@code isTerminated()}, or true without a twin
   */
  public boolean isTerminated() {
    HttpClient t = twin;
    return t == null || Boolean.TRUE.equals(Lifecycle.call(t, "isTerminated"));
  }

  /**
   * Waits until the twin has terminated, if one was built (Java 21+).
   *
   * @param duration how long to wait at most
   * @return true if it terminated, or none was built; false if the time ran out, or before Java 21
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean awaitTermination(Duration duration) throws InterruptedException {
    HttpClient t = twin;
    return t == null || Boolean.TRUE.equals(Lifecycle.call(t, "awaitTermination", Lifecycle.durationParam(), duration));
  }

  /**
   * Whether keyed attempts go through a twin (built or not yet): the Idem client's own, which its
   * {@code close()} closes, so its keyed calls stop first.
   *
   * @return true if the app's client follows redirects or has an authenticator
   */
  public boolean usesTwin() {
    return needsTwin;
  }

  private static boolean followsUp(HttpClient c) {
    return c.followRedirects() != HttpClient.Redirect.NEVER || c.authenticator().isPresent();
  }

  private static boolean isJdkClient(HttpClient c) {
    return c.getClass().getName().startsWith("jdk.internal.net.http.");
  }

  private static HttpClient twinOf(HttpClient app) {
    HttpClient.Builder b = HttpClient.newBuilder()
        .followRedirects(HttpClient.Redirect.NEVER)
        .version(app.version())
        .sslContext(app.sslContext())
        .sslParameters(app.sslParameters());
    app.connectTimeout().ifPresent(b::connectTimeout);
    app.proxy().ifPresent(b::proxy);
    app.cookieHandler().ifPresent(b::cookieHandler);
    app.executor().ifPresent(b::executor);
    app.authenticator().ifPresent(a -> b.authenticator(new ProxyOnly(a)));
    return b.build();
  }

  /**
   * Answers a proxy's challenge with the app's authenticator, and no server's. Declining a server's
   * challenge by returning null would make the JDK client fail the exchange with a bare
   * IOException ("No credentials provided"): the 401 would be lost, and the attempt taken for one
   * without an answer. So it throws {@link ServerChallenge}, which {@link AttemptSender} turns into
   * the attempt's answer, the 401.
   */
  private static final class ProxyOnly extends Authenticator {
    private final Authenticator app;

    ProxyOnly(Authenticator app) {
      this.app = app;
    }

    @Override
    protected PasswordAuthentication getPasswordAuthentication() {
      if (getRequestorType() != RequestorType.PROXY) {
        throw new ServerChallenge(getRequestingScheme(), getRequestingPrompt());
      }
      return app.requestPasswordAuthenticationInstance(getRequestingHost(), getRequestingSite(), getRequestingPort(),
          getRequestingProtocol(), getRequestingPrompt(), getRequestingScheme(), getRequestingURL(),
          getRequestorType());
    }
  }

  /**
   * The server answered a keyed attempt 401 with a challenge, and the JDK client asked for
   * credentials to re-send it; Idem declined. The JDK client discards the 401 itself (its status
   * and challenge are all that is known of it), so the attempt's answer is rebuilt from them.
   */
  static final class ServerChallenge extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String scheme;
    private final String realm;

    ServerChallenge(String scheme, String realm) {
      super("the server answered 401 with a " + scheme + " challenge; Idem does not re-send a keyed request with"
          + " the authenticator's credentials", null, false, false);
      this.scheme = scheme;
      this.realm = realm;
    }

    /** The 401 as far as it is known: its status and its challenge; the body is not kept. */
    ResponseSnapshot answer() {
      String challenge = (scheme == null || scheme.isEmpty() ? "Basic" : capitalized(scheme))
          + (realm == null ? "" : " realm=\"" + realm.replace("\"", "") + "\"");
      return new ResponseSnapshot(401, Map.of("WWW-Authenticate", List.of(challenge),
          ResponseSnapshot.BODY_NOT_KEPT_HEADER, List.of("unknown")), new byte[0]);
    }

    private static String capitalized(String s) {
      return s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1).toLowerCase(Locale.ROOT);
    }
  }
}
