package dev.idem.spring.autoconfigure;

import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Idem's settings, under idem.*; every one has a default, so a new app needs none. See
 * docs/spring.md for the full list with examples. Bound once at startup; not thread-safe to change.
 */
@ConfigurationProperties(prefix = "idem")
public class IdemProperties {
  /**
   * This instance's name in leases, claims and the webhook processor's owner column. Give each
   * instance of a fleet a stable one (a StatefulSet pod's name) so that a restarted instance takes
   * its own work back at once. Default: the HOSTNAME environment variable (the pod's name on
   * Kubernetes), else a name drawn per process.
   */
  private String owner;

  /**
   * The directory of Idem's embedded stores: the journal in journal/, the guard's records
   * in guard.db, the webhook inbox in webhooks/. Keep it on a persistent volume:
   * it holds the keys of operations still to deliver. Default idem under the working
   * directory.
   */
  private String directory = "idem";

  /**
   * How long a graceful shutdown waits for the outbox to deliver what is queued, before the
   * executor and the journal close; what is left stays journaled and is delivered after the
   * restart. Keep it below spring.lifecycle.timeout-per-shutdown-phase (30 s by default).
   */
  private Duration shutdownTimeout = Duration.ofSeconds(20);

  private final Journal journal = new Journal();
  private final Client client = new Client();
  private final Outbox outbox = new Outbox();
  private final Server server = new Server();
  private final Webhooks webhooks = new Webhooks();

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

  /**
   * The owner name.
   *
   * @return the owner name, or null for the default
   */
  public String getOwner() {
    return owner;
  }

  /**
   * Sets the owner name.
   *
   * @param owner the owner name
   */
  public void setOwner(String owner) {
    this.owner = owner;
  }

  /**
   * The directory of the embedded stores.
   *
   * @return the directory
   */
  public String getDirectory() {
    return directory;
  }

  /**
   * Sets the directory of the embedded stores.
   *
   * @param directory the directory
   */
  public void setDirectory(String directory) {
    this.directory = directory;
  }

  /**
   * The outbox's drain time at shutdown.
   *
   * @return the timeout
   */
  public Duration getShutdownTimeout() {
    return shutdownTimeout;
  }

  /**
   * Sets the outbox's drain time at shutdown.
   *
   * @param shutdownTimeout the timeout
   */
  public void setShutdownTimeout(Duration shutdownTimeout) {
    this.shutdownTimeout = shutdownTimeout;
  }

  /**
   * The journal's settings.
   *
   * @return the journal's settings
   */
  public Journal getJournal() {
    return journal;
  }

  /**
   * The client's settings.
   *
   * @return the client's settings
   */
  public Client getClient() {
    return client;
  }

  /**
   * The outbox's settings.
   *
   * @return the outbox's settings
   */
  public Outbox getOutbox() {
    return outbox;
  }

  /**
   * The server guard's settings.
   *
   * @return the guard's settings
   */
  public Server getServer() {
    return server;
  }

  /**
   * The webhook inbox's settings.
   *
   * @return the inbox's settings
   */
  public Webhooks getWebhooks() {
    return webhooks;
  }

  /** The client journal. */
  public static class Journal {
    /**
     * Where the journal lives: EMBEDDED (SQLite in idem.directory/journal, one process) or
     * DATASOURCE (the app's DataSource: PostgreSQL for a fleet).
     */
    private Store store = Store.EMBEDDED;

    /**
     * Where.
     *
     * @return the store
     */
    public Store getStore() {
      return store;
    }

    /**
     * Sets where.
     *
     * @param store the store
     */
    public void setStore(Store store) {
      this.store = store;
    }
  }

  /** The RestClient, RestTemplate and WebClient side. */
  public static class Client {
    /** Whether Idem's interceptor and filter are added to the app's RestClient.Builder, RestTemplate and WebClient.Builder beans. */
    private boolean enabled = true;
    /**
     * What an untagged POST or PATCH (one without an IdempotentCall attribute) gets. FRESH_KEY (the
     * default): a key and the journal, as operation untagged-post or untagged-patch. REJECT: it
     * fails before anything is sent. PASS_THROUGH: it goes out without a key and unjournaled (a
     * warning is logged at startup).
     */
    private UntaggedPolicy untaggedPolicy = UntaggedPolicy.FRESH_KEY;
    /** The key header's name. */
    // A literal, not ProtocolHeaders.KEY: the configuration processor reads defaults from literals only.
    private String keyHeader = "Idempotency-Key";
    /** How the key is written: BARE or STRUCTURED_STRING (an RFC 8941 quoted string). */
    private KeyHeaderFormat keyFormat = KeyHeaderFormat.BARE;
    /** The largest request body of a keyed call, in bytes; a larger one is refused before anything is sent. */
    private long maxBodyBytes = 1048576;
    /** The most attempts per operation, the first included. */
    private int maxAttempts = 3;
    /** The longest one attempt may take before it is abandoned as ambiguous and retried with the same key; none by default. */
    private Duration attemptTimeout;
    /** The longest an operation may take from its first attempt; none by default. */
    private Duration deadline;
    /** How long the target servers keep a key; an operation still pending past it is not re-sent blindly. */
    private Duration serverKeyRetention = Duration.ofHours(24);
    /**
     * Header names never journaled, besides those of the default rule (Authorization,
     * Proxy-Authorization, Cookie, Set-Cookie, and names containing token, secret, auth, session...).
     */
    private Set<String> secretHeaders = new LinkedHashSet<>();

    /**
     * Whether the client side is on.
     *
     * @return true if on
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Turns the client side on or off.
     *
     * @param enabled true for on
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * The untagged policy.
     *
     * @return the policy
     */
    public UntaggedPolicy getUntaggedPolicy() {
      return untaggedPolicy;
    }

    /**
     * Sets the untagged policy.
     *
     * @param untaggedPolicy the policy
     */
    public void setUntaggedPolicy(UntaggedPolicy untaggedPolicy) {
      this.untaggedPolicy = untaggedPolicy;
    }

    /**
     * The key header.
     *
     * @return the name
     */
    public String getKeyHeader() {
      return keyHeader;
    }

    /**
     * Sets the key header.
     *
     * @param keyHeader the name
     */
    public void setKeyHeader(String keyHeader) {
      this.keyHeader = keyHeader;
    }

    /**
     * The key format.
     *
     * @return the format
     */
    public KeyHeaderFormat getKeyFormat() {
      return keyFormat;
    }

    /**
     * Sets the key format.
     *
     * @param keyFormat the format
     */
    public void setKeyFormat(KeyHeaderFormat keyFormat) {
      this.keyFormat = keyFormat;
    }

    /**
     * The body cap.
     *
     * @return bytes
     */
    public long getMaxBodyBytes() {
      return maxBodyBytes;
    }

    /**
     * Sets the body cap.
     *
     * @param maxBodyBytes bytes
     */
    public void setMaxBodyBytes(long maxBodyBytes) {
      this.maxBodyBytes = maxBodyBytes;
    }

    /**
     * The most attempts.
     *
     * @return attempts
     */
    public int getMaxAttempts() {
      return maxAttempts;
    }

    /**
     * Sets the most attempts.
     *
     * @param maxAttempts attempts
     */
    public void setMaxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
    }

    /**
     * The attempt timeout.
     *
     * @return the timeout, or null for none
     */
    public Duration getAttemptTimeout() {
      return attemptTimeout;
    }

    /**
     * Sets the attempt timeout.
     *
     * @param attemptTimeout the timeout
     */
    public void setAttemptTimeout(Duration attemptTimeout) {
      this.attemptTimeout = attemptTimeout;
    }

    /**
     * The deadline.
     *
     * @return the deadline, or null for none
     */
    public Duration getDeadline() {
      return deadline;
    }

    /**
     * Sets the deadline.
     *
     * @param deadline the deadline
     */
    public void setDeadline(Duration deadline) {
      this.deadline = deadline;
    }

    /**
     * The servers' key retention.
     *
     * @return the retention
     */
    public Duration getServerKeyRetention() {
      return serverKeyRetention;
    }

    /**
     * Sets the servers' key retention.
     *
     * @param serverKeyRetention the retention
     */
    public void setServerKeyRetention(Duration serverKeyRetention) {
      this.serverKeyRetention = serverKeyRetention;
    }

    /**
     * The extra secret headers.
     *
     * @return header names
     */
    public Set<String> getSecretHeaders() {
      return secretHeaders;
    }

    /**
     * Sets the extra secret headers.
     *
     * @param secretHeaders header names
     */
    public void setSecretHeaders(Set<String> secretHeaders) {
      this.secretHeaders = secretHeaders;
    }
  }

  /** Queued delivery and what a restart left pending. */
  public static class Outbox {
    /** Whether an outbox dispatcher delivers queued and left-over operations of the names below. */
    private boolean enabled = true;
    /**
     * The operation names the outbox delivers, through a JDK HttpClient with the journaled request
     * (no secrets: add an OutboxCustomizer bean for calls that need Authorization after a restart).
     */
    private List<String> operations = new ArrayList<>(List.of("untagged-post", "untagged-patch"));
    /** Threads that send queued operations. */
    private int workers = 2;

    /**
     * Whether the outbox is on.
     *
     * @return true if on
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Turns the outbox on or off.
     *
     * @param enabled true for on
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * The operation names delivered.
     *
     * @return the names
     */
    public List<String> getOperations() {
      return operations;
    }

    /**
     * Sets the operation names delivered.
     *
     * @param operations the names
     */
    public void setOperations(List<String> operations) {
      this.operations = operations;
    }

    /**
     * The worker threads.
     *
     * @return the count
     */
    public int getWorkers() {
      return workers;
    }

    /**
     * Sets the worker threads.
     *
     * @param workers the count
     */
    public void setWorkers(int workers) {
      this.workers = workers;
    }
  }

  /** The server guard, for the app's own endpoints. */
  public static class Server {
    /** Whether the guard's filter is registered (it guards only the routes below and @Idempotent handlers). */
    private boolean enabled = true;
    /**
     * Routes to guard, as "METHOD /path" with Ant-style patterns, such as "POST /orders" or
     * "POST /payments/**". Handlers can also be marked with @Idempotent.
     */
    private List<String> routes = new ArrayList<>();
    /**
     * Whether the routes above run in transactional mode: the claim, the handler's writes on the
     * app's DataSource and the stored result commit in one Spring-managed transaction. Needs
     * idem.server.store=datasource.
     */
    private boolean transactional;
    /** Where the guard's records live: EMBEDDED (idem.directory/guard.db) or DATASOURCE (the app's database). */
    private Store store = Store.EMBEDDED;
    /** The key header the guard reads. */
    // A literal, not ProtocolHeaders.KEY: the configuration processor reads defaults from literals only.
    private String keyHeader = "Idempotency-Key";
    /** How long a completed result is kept and replayed. */
    private Duration retention = Duration.ofHours(24);
    /** The status for a key reused with another payload: 422 (the IETF draft), or 409 or 417 as some APIs answer. */
    private int mismatchStatus = 422;
    /** How long a repeat waits for the first request's result before it is answered 409. */
    private Duration inFlightWait = Duration.ZERO;

    /**
     * Whether the guard is on.
     *
     * @return true if on
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Turns the guard on or off.
     *
     * @param enabled true for on
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * The guarded routes.
     *
     * @return "METHOD /pattern" entries
     */
    public List<String> getRoutes() {
      return routes;
    }

    /**
     * Sets the guarded routes.
     *
     * @param routes "METHOD /pattern" entries
     */
    public void setRoutes(List<String> routes) {
      this.routes = routes;
    }

    /**
     * Whether the routes are transactional.
     *
     * @return true if so
     */
    public boolean isTransactional() {
      return transactional;
    }

    /**
     * Sets whether the routes are transactional.
     *
     * @param transactional true for transactional mode
     */
    public void setTransactional(boolean transactional) {
      this.transactional = transactional;
    }

    /**
     * Where the records live.
     *
     * @return the store
     */
    public Store getStore() {
      return store;
    }

    /**
     * Sets where the records live.
     *
     * @param store the store
     */
    public void setStore(Store store) {
      this.store = store;
    }

    /**
     * The key header.
     *
     * @return the name
     */
    public String getKeyHeader() {
      return keyHeader;
    }

    /**
     * Sets the key header.
     *
     * @param keyHeader the name
     */
    public void setKeyHeader(String keyHeader) {
      this.keyHeader = keyHeader;
    }

    /**
     * The retention.
     *
     * @return the retention
     */
    public Duration getRetention() {
      return retention;
    }

    /**
     * Sets the retention.
     *
     * @param retention the retention
     */
    public void setRetention(Duration retention) {
      this.retention = retention;
    }

    /**
     * The mismatch status.
     *
     * @return the status
     */
    public int getMismatchStatus() {
      return mismatchStatus;
    }

    /**
     * Sets the mismatch status.
     *
     * @param mismatchStatus the status
     */
    public void setMismatchStatus(int mismatchStatus) {
      this.mismatchStatus = mismatchStatus;
    }

    /**
     * The in-flight wait.
     *
     * @return the wait
     */
    public Duration getInFlightWait() {
      return inFlightWait;
    }

    /**
     * Sets the in-flight wait.
     *
     * @param inFlightWait the wait
     */
    public void setInFlightWait(Duration inFlightWait) {
      this.inFlightWait = inFlightWait;
    }
  }

  /** The webhook inbox. */
  public static class Webhooks {
    /** Where the inbox lives: EMBEDDED (idem.directory/webhooks) or DATASOURCE (PostgreSQL only). */
    private Store store = Store.EMBEDDED;
    /** The processor's worker threads. */
    private int workers = 4;
    /** The senders, by name: each gets an endpoint (default /webhooks/NAME) that verifies and stores its deliveries. */
    private Map<String, Source> sources = new LinkedHashMap<>();

    /**
     * Where the inbox lives.
     *
     * @return the store
     */
    public Store getStore() {
      return store;
    }

    /**
     * Sets where the inbox lives.
     *
     * @param store the store
     */
    public void setStore(Store store) {
      this.store = store;
    }

    /**
     * The worker threads.
     *
     * @return the count
     */
    public int getWorkers() {
      return workers;
    }

    /**
     * Sets the worker threads.
     *
     * @param workers the count
     */
    public void setWorkers(int workers) {
      this.workers = workers;
    }

    /**
     * The sources by name.
     *
     * @return the sources
     */
    public Map<String, Source> getSources() {
      return sources;
    }

    /**
     * Sets the sources.
     *
     * @param sources the sources by name
     */
    public void setSources(Map<String, Source> sources) {
      this.sources = sources;
    }
  }

  /** One webhook sender. */
  public static class Source {
    /** How it signs its deliveries. */
    private Scheme scheme;
    /**
     * Its signing secrets, from the app's property sources (an environment variable, a secret
     * store): during a rotation, the new and the old one. Never logged.
     */
    private List<String> secrets = new ArrayList<>();
    /** The endpoint's path; default /webhooks/NAME. */
    private String path;
    /** How far a signed timestamp may be from now, either way. */
    private Duration tolerance = Duration.ofMinutes(5);

    /**
     * The scheme.
     *
     * @return the scheme
     */
    public Scheme getScheme() {
      return scheme;
    }

    /**
     * Sets the scheme.
     *
     * @param scheme the scheme
     */
    public void setScheme(Scheme scheme) {
      this.scheme = scheme;
    }

    /**
     * The secrets.
     *
     * @return the secrets
     */
    public List<String> getSecrets() {
      return secrets;
    }

    /**
     * Sets the secrets.
     *
     * @param secrets the secrets
     */
    public void setSecrets(List<String> secrets) {
      this.secrets = secrets;
    }

    /**
     * The path.
     *
     * @return the path, or null for the default
     */
    public String getPath() {
      return path;
    }

    /**
     * Sets the path.
     *
     * @param path the path
     */
    public void setPath(String path) {
      this.path = path;
    }

    /**
     * The tolerance.
     *
     * @return the tolerance
     */
    public Duration getTolerance() {
      return tolerance;
    }

    /**
     * Sets the tolerance.
     *
     * @param tolerance the tolerance
     */
    public void setTolerance(Duration tolerance) {
      this.tolerance = tolerance;
    }

    /** Names the scheme and counts the secrets; never shows them. */
    @Override
    public String toString() {
      return "Source[" + scheme + ", " + secrets.size() + " secrets, path " + path + "]";
    }
  }
}
