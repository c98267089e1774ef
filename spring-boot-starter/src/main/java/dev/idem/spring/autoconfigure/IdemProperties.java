package dev.idem.spring.autoconfigure;

import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.jdbc.JdbcJournal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

// Records bound through their constructors: the configuration processor takes each property's
// description from the @param tag and its default from @DefaultValue, so the metadata and
// docs/spring.md keep their names, descriptions and defaults.
// ignoreUnknownFields = false: every idem.* key the starter reads is bound here (the
// @ConditionalOnProperty enabled flags are fields too, and webhooks.sources is a map whose keys are
// names), so a key not bound is a misspelling; ignored, it would leave the default in force
// (idem.client.untaged-policy=reject, a journal in ./idem for idem.directroy) without a word.
/**
 * Idem's settings, under idem.*; every one has a default, so a new app needs none. See
 * docs/spring.md for the full list with examples. Bound once at startup and immutable after, so
 * safe to share between threads. A value that cannot mean what it says fails the binding, and so
 * the startup, with an {@link IllegalArgumentException} naming the property, and so does a key
 * under idem. that names no property here (a misspelt {@code idem.client.untaged-policy}), with
 * Spring's binding error naming the key.
 *
 * @param owner This instance's name in leases, claims and the webhook processor's owner column.
 *     Give each instance of a fleet a stable one (a StatefulSet pod's name) so that a restarted
 *     instance takes its own work back at once. Default: the HOSTNAME environment variable (the
 *     pod's name on Kubernetes), else a name drawn per process.
 * @param directory The directory of Idem's embedded stores: the journal in journal/, the guard's
 *     records in guard.db, the webhook inbox in webhooks/. Keep it on a persistent volume: it holds
 *     the keys of operations still to deliver. Default idem under the working directory; a blank
 *     value (what ${IDEM_DIR:} gives when the variable is unset) fails the startup rather than
 *     putting the stores in the working directory itself.
 * @param shutdownTimeout How long a graceful shutdown waits for the outbox to deliver what is
 *     queued, before the executor and the journal close; what is left stays journaled and is
 *     delivered after the restart (0s: no wait, everything queued is delivered after the restart;
 *     a negative value fails the startup). With webhooks, the processor's stop comes next, up to
 *     15 s (its 10 s grace for running handlers, then 5 s for the interrupted ones to hand their
 *     events back); the executor's close then waits up to 10 s more for a synchronous attempt on
 *     the wire. Keep the sum below spring.lifecycle.timeout-per-shutdown-phase (30 s by default;
 *     without webhooks the default 15 s leaves 5 s to spare, with them the defaults sum to 40 s:
 *     raise the phase timeout): past it, Boot stops waiting and goes on to close the beans, the
 *     journal among them.
 * @param journal The client journal's settings.
 * @param client The RestClient, RestTemplate and WebClient side's settings.
 * @param outbox The outbox's settings.
 * @param server The server guard's settings.
 * @param webhooks The webhook inbox's settings.
 */
@ConfigurationProperties(prefix = "idem", ignoreUnknownFields = false)
public record IdemProperties(
    String owner,
    @DefaultValue("idem") String directory,
    @DefaultValue("15s") Duration shutdownTimeout,
    @DefaultValue Journal journal,
    @DefaultValue Client client,
    @DefaultValue Outbox outbox,
    @DefaultValue Server server,
    @DefaultValue Webhooks webhooks) {

  /**
   * Refuses what the defaults cannot stand for: a blank directory (an unset {@code ${IDEM_DIR:}})
   * would put the stores in the working directory, lost at the next deploy, and a negative
   * shutdown timeout would skip the outbox's drain at once.
   *
   * @param owner as the record's {@code owner}
   * @param directory as the record's {@code directory}; not blank
   * @param shutdownTimeout as the record's {@code shutdownTimeout}; not negative
   * @param journal as the record's {@code journal}
   * @param client as the record's {@code client}
   * @param outbox as the record's {@code outbox}
   * @param server as the record's {@code server}
   * @param webhooks as the record's {@code webhooks}
   * @throws IllegalArgumentException naming the property
   */
  public IdemProperties {
    if (directory == null || directory.isBlank()) {
      throw new IllegalArgumentException("idem.directory is blank: set it to a directory on a persistent volume (its"
          + " default is idem, under the working directory); a blank value would put Idem's stores in the working"
          + " directory itself");
    }
    if (shutdownTimeout == null || shutdownTimeout.isNegative()) {
      throw new IllegalArgumentException("idem.shutdown-timeout is "
          + (shutdownTimeout == null ? "empty" : shutdownTimeout) + ": it must be 0s (no wait) or more");
    }
  }

  /**
   * The longest duration the core's builders take for a setting (36525 days, 100 years): a longer
   * one would overflow when added to an instant. The same limit as theirs, so that a value is
   * refused here exactly when the builder would refuse it, but naming the property.
   */
  static final Duration MAX_DURATION = Duration.ofDays(36_525);

  /**
   * Refuses, naming the property, a duration the core's builders refuse (they say
   * "deadline must be positive", a name no setting has).
   *
   * @throws IllegalArgumentException if {@code d} is null, zero, negative or above {@link #MAX_DURATION}
   */
  private static void requirePositive(Duration d, String property) {
    if (d == null || d.isZero() || d.isNegative() || d.compareTo(MAX_DURATION) > 0) {
      throw new IllegalArgumentException(property + " must be positive and at most 36525d (100 years), was "
          + (d == null ? "empty" : d));
    }
  }

  /**
   * Refuses, naming the property, a number below what the core's builders take.
   *
   * @throws IllegalArgumentException if {@code n} is below {@code least}
   */
  private static void requireAtLeast(long n, long least, String property, String why) {
    if (n < least) {
      throw new IllegalArgumentException(property + " must be at least " + least + ", was " + n + why);
    }
  }

  /** Where a store lives. */
  public enum Store {
    /** SQLite in idem.directory: one process owns it. */
    EMBEDDED,
    /** The app's DataSource: PostgreSQL, shared by a fleet (SQLite for one instance). */
    DATASOURCE
  }

  /** The webhook signature schemes. */
  public enum Scheme {
    /** Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). */
    STANDARD_WEBHOOKS,
    /** Stripe's Stripe-Signature. */
    STRIPE,
    /** GitHub's X-Hub-Signature-256. */
    GITHUB
  }

  // The default is a literal, not JdbcJournal.DEFAULT_MAX_REQUEST_BODY: the configuration
  // processor reads defaults from literals only.
  /**
   * The client journal.
   *
   * @param store Where the journal lives: EMBEDDED (SQLite in idem.directory/journal, one process)
   *     or DATASOURCE (the app's DataSource: PostgreSQL for a fleet).
   * @param maxRequestBodyBytes The largest request body the journal takes, in bytes: 1 to 716800
   *     (700 KiB). A keyed call with a larger body is refused when it is journaled, before
   *     anything is sent; idem.client.max-body-bytes (1 MiB by default) is checked first, so a
   *     call meets the smaller of the two.
   */
  public record Journal(
      @DefaultValue("embedded") Store store,
      @DefaultValue("524288") int maxRequestBodyBytes) {

    /**
     * Refuses a limit the journal cannot take, or one that would refuse every keyed call with a
     * body (0 or less), so that the startup fails naming the property rather than the journal's
     * builder.
     *
     * @param store as the record's {@code store}
     * @param maxRequestBodyBytes as the record's {@code maxRequestBodyBytes}; 1 to
     *     {@link JdbcJournal#MAX_REQUEST_BODY_CEILING}
     * @throws IllegalArgumentException naming the property
     */
    public Journal {
      if (maxRequestBodyBytes <= 0 || maxRequestBodyBytes > JdbcJournal.MAX_REQUEST_BODY_CEILING) {
        throw new IllegalArgumentException("idem.journal.max-request-body-bytes is " + maxRequestBodyBytes
            + ": it must be 1 to " + JdbcJournal.MAX_REQUEST_BODY_CEILING + " (700 KiB, the journal's ceiling;"
            + " default " + JdbcJournal.DEFAULT_MAX_REQUEST_BODY + ", 512 KiB)");
      }
    }
  }

  // The key headers' defaults are literals, not ProtocolHeaders.KEY: the configuration processor
  // reads defaults from literals only.
  /**
   * The RestClient, RestTemplate and WebClient side.
   *
   * @param enabled Whether Idem's interceptor and filter are added to the app's RestClient.Builder,
   *     RestTemplate and WebClient.Builder beans.
   * @param untaggedPolicy What an untagged POST or PATCH (one without an IdempotentCall attribute)
   *     gets. FRESH_KEY (the default): a key and the journal, as operation untagged-post or
   *     untagged-patch. REJECT: it fails before anything is sent. PASS_THROUGH: it goes out
   *     without a key and unjournaled (a warning is logged at startup).
   * @param keyHeader The key header's name.
   * @param keyFormat How the key is written: BARE or STRUCTURED_STRING (an RFC 8941 quoted string).
   * @param maxBodyBytes The largest request body of a keyed call, in bytes; a larger one is refused
   *     before anything is sent.
   * @param maxAttempts The most attempts per operation, the first included.
   * @param attemptTimeout The longest one attempt may take before it is abandoned as ambiguous and
   *     retried with the same key; none by default (the outbox's own deliveries are still bounded:
   *     by their journaled request timeout, else 30 s).
   * @param deadline The longest an operation may take from its first attempt; 60 s by default.
   * @param serverKeyRetention How long the target servers keep a key; an operation still pending
   *     past it is not re-sent blindly.
   * @param secretHeaders Header names never journaled, besides those of the default rule
   *     (Authorization, Proxy-Authorization, DPoP, Cookie, Set-Cookie, and names containing token,
   *     secret, auth, session...).
   * @param allowHeaders Header names the default secret rule matches but that hold no credential
   *     (X-Session-Id, say): journaled in clear and sent again as stored on a resume. A name in
   *     secretHeaders stays secret; Authorization, Proxy-Authorization, DPoP, Cookie and Set-Cookie are
   *     never journaled.
   * @param allowQueryParameters Query parameter names the secret rule matches (api_key,
   *     access_token...) that may be journaled in clear as part of the URI; without this, a keyed
   *     call to such a URI is refused before anything is journaled or sent. Matched ignoring case,
   *     as the rule matches: sig also allows SIG.
   */
  public record Client(
      @DefaultValue("true") boolean enabled,
      @DefaultValue("fresh-key") UntaggedPolicy untaggedPolicy,
      @DefaultValue("Idempotency-Key") String keyHeader,
      @DefaultValue("bare") KeyHeaderFormat keyFormat,
      @DefaultValue("1048576") long maxBodyBytes,
      @DefaultValue("3") int maxAttempts,
      Duration attemptTimeout,
      @DefaultValue("60s") Duration deadline,
      @DefaultValue("24h") Duration serverKeyRetention,
      @DefaultValue Set<String> secretHeaders,
      @DefaultValue Set<String> allowHeaders,
      @DefaultValue Set<String> allowQueryParameters) {

    /**
     * Refuses what the retry policy's, the executor's and the client adapters' builders refuse,
     * with the same limits, so that the startup fails naming the property rather than in the
     * builders, whose messages name their own parameters ({@code maxAttempts}) and no property.
     *
     * @param enabled as the record's {@code enabled}
     * @param untaggedPolicy as the record's {@code untaggedPolicy}
     * @param keyHeader as the record's {@code keyHeader}; printable ASCII without spaces or colons
     * @param keyFormat as the record's {@code keyFormat}
     * @param maxBodyBytes as the record's {@code maxBodyBytes}; 0 or more
     * @param maxAttempts as the record's {@code maxAttempts}; at least 1
     * @param attemptTimeout as the record's {@code attemptTimeout}; null (none), or positive
     * @param deadline as the record's {@code deadline}; null (the policy's own 60 s), or positive
     * @param serverKeyRetention as the record's {@code serverKeyRetention}; positive
     * @param secretHeaders as the record's {@code secretHeaders}
     * @param allowHeaders as the record's {@code allowHeaders}
     * @param allowQueryParameters as the record's {@code allowQueryParameters}
     * @throws IllegalArgumentException naming the property; a duration may be at most 36525 days
     */
    public Client {
      if (keyHeader == null) {
        throw new IllegalArgumentException("idem.client.key-header is empty: it must be a header name, such as"
            + " Idempotency-Key (the default)");
      }
      try {
        // The adapters' own rule, not a copy: a name their builder takes must bind, and only such a name.
        AdapterSupport.checkHeaderName(keyHeader);
      } catch (IllegalArgumentException notAName) {
        // Without it as cause: Boot's failure analysis shows the root cause, which names no property.
        throw new IllegalArgumentException("idem.client.key-header must be a header name (printable ASCII without"
            + " spaces or colons), such as Idempotency-Key (the default), was '" + keyHeader + "'");
      }
      requireAtLeast(maxBodyBytes, 0, "idem.client.max-body-bytes", "");
      requireAtLeast(maxAttempts, 1, "idem.client.max-attempts", " (it counts the first attempt; 1 turns retries"
          + " off)");
      if (attemptTimeout != null) {
        requirePositive(attemptTimeout, "idem.client.attempt-timeout");
      }
      if (deadline != null) {
        requirePositive(deadline, "idem.client.deadline");
      }
      requirePositive(serverKeyRetention, "idem.client.server-key-retention");
    }
  }

  /**
   * Queued delivery and what a restart left pending.
   *
   * @param enabled Whether an outbox dispatcher delivers queued and left-over operations of the
   *     names below.
   * @param operations The operation names the outbox delivers, through a JDK HttpClient with the
   *     journaled request (no secrets: add an OutboxCustomizer bean for calls that need
   *     Authorization after a restart).
   * @param workers Threads that send queued operations.
   */
  public record Outbox(
      @DefaultValue("true") boolean enabled,
      @DefaultValue({"untagged-post", "untagged-patch"}) List<String> operations,
      @DefaultValue("2") int workers) {

    /**
     * Refuses what the dispatcher's builder refuses, naming the property: its message names its
     * own parameter ({@code syncWorkers}), which no setting or page of the docs mentions.
     *
     * @param enabled as the record's {@code enabled}
     * @param operations as the record's {@code operations}
     * @param workers as the record's {@code workers}; at least 1
     * @throws IllegalArgumentException naming the property
     */
    public Outbox {
      requireAtLeast(workers, 1, "idem.outbox.workers", "");
    }
  }

  /**
   * The server guard, for the app's own endpoints.
   *
   * @param enabled Whether the guard's filter is registered (it guards only the routes below
   *     and @Idempotent handlers).
   * @param routes Routes to guard, as "METHOD /path" with Ant-style patterns, such as "POST
   *     /orders" or "POST /payments/**". Handlers can also be marked with @Idempotent.
   * @param transactional Whether the routes above run in transactional mode: the claim, the
   *     handler's writes on the app's DataSource and the stored result commit in one
   *     Spring-managed transaction. Needs idem.server.store=datasource. A route over a handler
   *     that answers asynchronously fails the startup, or, if the route reaches it only for some
   *     paths, is refused per request before the handler runs.
   * @param store Where the guard's records live: EMBEDDED (idem.directory/guard.db) or DATASOURCE
   *     (the app's database).
   * @param keyHeader The key header the guard reads.
   * @param retention How long a completed result is kept and replayed.
   * @param mismatchStatus The status for a key reused with another payload: 422 (the IETF draft),
   *     or 409 or 417 as some APIs answer.
   * @param inFlightWait How long a repeat waits for the first request's result before it is
   *     answered 409.
   * @param maxBufferedBodyBytes The largest answer of a transactional handler, in bytes: it is
   *     held in memory until its transaction commits (what is stored is capped separately, at
   *     1 MiB). A handler that writes more is rolled back with nothing stored and answered 500, as
   *     is its retry; use lease mode for such a handler.
   * @param callerHeader The request header whose value is the caller a key is scoped by (a tenant
   *     or account id), instead of the user principal's name: for an app that tells its tenants
   *     apart without Spring Security, behind a gateway that sets this header and drops any value
   *     a client sent. A keyed request without it, with it more than once or with a comma in it
   *     (a gateway's appended value beside a client's) is refused 400, never put in a shared scope. Unset
   *     by default (the principal's name, "anonymous" without one); an IdempotencyCaller bean is
   *     the other way to give the caller, and only one of the two may be set.
   */
  public record Server(
      @DefaultValue("true") boolean enabled,
      @DefaultValue List<String> routes,
      boolean transactional,
      @DefaultValue("embedded") Store store,
      @DefaultValue("Idempotency-Key") String keyHeader,
      @DefaultValue("24h") Duration retention,
      @DefaultValue("422") int mismatchStatus,
      @DefaultValue("0s") Duration inFlightWait,
      @DefaultValue("8388608") long maxBufferedBodyBytes,
      String callerHeader) {

    /**
     * Refuses a key or caller header that is no header name, so that the startup fails naming the
     * property rather than every keyed request being refused for a header no client can send.
     *
     * @param enabled as the record's {@code enabled}
     * @param routes as the record's {@code routes}
     * @param transactional as the record's {@code transactional}
     * @param store as the record's {@code store}
     * @param keyHeader as the record's {@code keyHeader}; an HTTP token
     * @param retention as the record's {@code retention}; positive, at most 36525 days
     * @param mismatchStatus as the record's {@code mismatchStatus}; 400 to 499
     * @param inFlightWait as the record's {@code inFlightWait}; 0s to 5m
     * @param maxBufferedBodyBytes as the record's {@code maxBufferedBodyBytes}; at least 1
     * @param callerHeader as the record's {@code callerHeader}; null (unset), or an HTTP token
     * @throws IllegalArgumentException naming the property
     */
    public Server {
      // The guard's builder's own limits (its messages name its parameters, not the property), and
      // the 100-year ceiling of every other duration setting: the guard adds the retention to an
      // instant on every keyed request.
      requirePositive(retention, "idem.server.retention");
      if (inFlightWait == null || inFlightWait.isNegative() || inFlightWait.compareTo(MAX_IN_FLIGHT_WAIT) > 0) {
        throw new IllegalArgumentException("idem.server.in-flight-wait must be 0s to 5m, was "
            + (inFlightWait == null ? "empty" : inFlightWait));
      }
      if (mismatchStatus < 400 || mismatchStatus > 499) {
        throw new IllegalArgumentException("idem.server.mismatch-status must be a 4xx (422, the default; or 409, 417),"
            + " was " + mismatchStatus);
      }
      requireAtLeast(maxBufferedBodyBytes, 1, "idem.server.max-buffered-body-bytes", "");
      // The client's key-header is checked by its adapter's builder; the guard only looks the name up,
      // so without this a name with a colon or a space started the app and refused every keyed request.
      if (keyHeader == null || !isToken(keyHeader)) {
        throw new IllegalArgumentException("idem.server.key-header is " + (keyHeader == null ? "empty" : "'"
            + keyHeader + "'") + ": it must be a header name (letters, digits and !#$%&'*+-.^_`|~), such as"
            + " Idempotency-Key (the default)");
      }
      if (callerHeader != null && !isToken(callerHeader)) {
        throw new IllegalArgumentException("idem.server.caller-header is '" + callerHeader + "': it must be a header"
            + " name (letters, digits and !#$%&'*+-.^_`|~), such as X-Tenant-Id; leave it unset to scope keys by the"
            + " user principal");
      }
    }

    /** The longest wait the guard's builder takes ({@code IdempotencyGuard.Builder.inFlightWait}). */
    private static final Duration MAX_IN_FLIGHT_WAIT = Duration.ofMinutes(5);

    private static boolean isToken(String s) {
      if (s.isEmpty()) {
        return false;
      }
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
            || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
        if (!ok) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * The webhook inbox.
   *
   * @param store Where the inbox lives: EMBEDDED (idem.directory/webhooks) or DATASOURCE
   *     (PostgreSQL only).
   * @param workers The processor's worker threads.
   * @param maxRunTime The longest a handler may run per attempt: then its thread is interrupted and
   *     the run counts as a failed attempt, retried or dead-lettered by the retry policy. Positive.
   * @param sources The senders, by name: each gets an endpoint (default /webhooks/NAME) that
   *     verifies and stores its deliveries.
   */
  public record Webhooks(
      @DefaultValue("embedded") Store store,
      @DefaultValue("4") int workers,
      @DefaultValue("15m") Duration maxRunTime,
      @DefaultValue Map<String, Source> sources) {

    /**
     * Refuses what the processor's builder refuses, naming the property: its messages name its own
     * parameters ({@code workers}, {@code maxRunTime}) and no property.
     *
     * @param store as the record's {@code store}
     * @param workers as the record's {@code workers}; at least 1
     * @param maxRunTime as the record's {@code maxRunTime}; positive (the processor has no ceiling)
     * @param sources as the record's {@code sources}; a source's tolerance not negative
     * @throws IllegalArgumentException naming the property
     */
    public Webhooks {
      requireAtLeast(workers, 1, "idem.webhooks.workers", "");
      if (maxRunTime == null || maxRunTime.isZero() || maxRunTime.isNegative()) {
        throw new IllegalArgumentException("idem.webhooks.max-run-time must be positive, was "
            + (maxRunTime == null ? "empty" : maxRunTime));
      }
      // Here, not in Source, which does not know its own name. The source builder's limit: any
      // tolerance not negative (0s takes only a timestamp of this very second).
      sources.forEach((name, source) -> {
        Duration tolerance = source.tolerance();
        if (tolerance == null || tolerance.isNegative()) {
          throw new IllegalArgumentException("idem.webhooks.sources." + name + ".tolerance must not be negative, was "
              + (tolerance == null ? "empty" : tolerance) + " (default 5m)");
        }
      });
    }
  }

  /**
   * One webhook sender.
   *
   * @param scheme How it signs its deliveries.
   * @param secrets Its signing secrets, from the app's property sources (an environment variable,
   *     a secret store): during a rotation, the new one first and the old one after it (where the
   *     event id is not signed, the first is the one whose signature the inbox remembers to refuse
   *     replays). Never logged.
   * @param path The endpoint's path, one exact path starting with '/' (no '*' pattern); default
   *     /webhooks/NAME.
   * @param tolerance How far a signed timestamp may be from now, either way.
   * @param maxBodyBytes The largest delivery body the endpoint takes, in bytes; a larger one is
   *     answered 413 without being buffered. Default 1 MiB (1048576); GitHub's deliveries reach
   *     25 MB (26214400). Below 1 fails the startup.
   */
  public record Source(
      Scheme scheme,
      @DefaultValue List<String> secrets,
      String path,
      @DefaultValue("5m") Duration tolerance,
      @DefaultValue("1048576") int maxBodyBytes) {

    /** Names the scheme and counts the secrets; never shows them. */
    @Override
    public String toString() {
      return "Source[" + scheme + ", " + secrets.size() + " secrets, path " + path + ", max " + maxBodyBytes
          + " bytes]";
    }
  }
}
