package dev.idem.webhooks;

import dev.idem.webhooks.internal.ConnectionSource;
import dev.idem.webhooks.internal.Dialect;
import dev.idem.webhooks.internal.InboxStore;
import dev.idem.webhooks.internal.SqliteOpener;
import java.io.IOException;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;

/**
 * The durable inbox: accepted events, their processing state, the dead letters and the attempt
 * history, in SQLite (embedded, one owning process) or PostgreSQL (several instances).
 *
 * <pre>{@code
 * WebhookInbox inbox = WebhookInbox.sqlite(Path.of("/var/lib/app/webhooks")).open();
 * WebhookInbox fleet = WebhookInbox.postgres(dataSource).open();
 * }</pre>
 *
 * <p>{@link #accept} is one durable insert keyed by (source, event id): it returns after the commit,
 * so an endpoint that answers 2xx after it never acknowledges what a crash could lose. Concurrent
 * accepts share commits: one writer connection batches whatever queued meanwhile into one
 * transaction. A known event id ({@link AcceptResult#DUPLICATE}) or an already accepted signature
 * ({@link AcceptResult#REPLAY}) inserts nothing. Events are kept until {@link #purgeDone} removes
 * finished ones; deduplication by id reaches back exactly as far as the events kept.
 *
 * <p>Embedded: the directory gets owner-only permissions and holds {@code inbox.db} (WAL,
 * synchronous=FULL, busy timeout 5 s) and {@code inbox.lock}, which this process locks while the
 * inbox is open; a second process fails to open it. Since the lock proves the last owner is dead,
 * events it was processing are due again at once. {@link #openReadOnly} reads it beside its
 * owner, for inspection tools such as the {@code idem} CLI.
 *
 * <p>Thread-safe. Methods throw {@link WebhookInboxException} when the store fails.
 */
public final class WebhookInbox implements AutoCloseable {
  private final InboxStore store;
  private final FileLock lock;  // embedded only
  private final Clock clock;
  private final List<Runnable> onNewWork = new CopyOnWriteArrayList<>();

  private WebhookInbox(InboxStore store, FileLock lock, Clock clock) {
    this.store = store;
    this.lock = lock;
    this.clock = clock;
  }

  /**
   * An embedded inbox in {@code directory} (created, owner-only, if missing).
   *
   * @param directory where {@code inbox.db} lives
   * @return a builder
   */
  public static Builder sqlite(Path directory) {
    return new Builder(Objects.requireNonNull(directory, "the webhook inbox directory is null; give the directory"
        + " where inbox.db lives, such as Path.of(\"/var/lib/app/webhooks\")"), null);
  }

  /**
   * Opens the embedded inbox in {@code directory} for reading only, for inspection tools: it takes
   * no lock (so it runs while the owning process has the inbox open), creates nothing, changes no
   * schema, voids no lease and writes no byte of the inbox's files (SQLite's read-only mode).
   * {@link #find}, {@link #deadLetters}, {@link #list}, {@link #counts}, {@link #oldestWaiting} and
   * {@link #attempts} work; {@link #accept}, {@link #redrive} and {@link #purgeDone} throw
   * {@link WebhookInboxException}, and no receiver or processor can be built on it.
   *
   * @param directory an embedded inbox's directory, as given to {@link #sqlite}
   * @return the inbox, read-only; close it when done
   * @throws WebhookInboxException if the directory holds no inbox, or it cannot be read
   */
  public static WebhookInbox openReadOnly(Path directory) {
    Objects.requireNonNull(directory, "the webhook inbox directory is null; give the directory where inbox.db"
        + " lives");
    Path dir = directory.toAbsolutePath().normalize();
    return new WebhookInbox(InboxStore.readOnly(Dialect.SQLITE, SqliteOpener.readOnlySource(dir), dir.toString()),
        null, Clock.systemUTC());
  }

  /**
   * An inbox in PostgreSQL, shared by every instance that opens it. Tables are created if missing.
   *
   * @param dataSource connections to the database; each inbox takes one writer and one reader
   * @return a builder
   */
  public static Builder postgres(DataSource dataSource) {
    return new Builder(null, Objects.requireNonNull(dataSource, "the webhook inbox's dataSource is null; give a"
        + " (pooling) DataSource of the PostgreSQL database, or use WebhookInbox.sqlite(directory)"));
  }

  /**
   * Stores a verified delivery, durably, before returning.
   *
   * @param webhook what {@link WebhookSource#verify} returned
   * @return ACCEPTED (stored, will be processed), DUPLICATE or REPLAY (nothing stored)
   * @throws WebhookInboxException if it could not be stored durably: nothing may be acknowledged
   */
  public AcceptResult accept(VerifiedWebhook webhook) {
    Objects.requireNonNull(webhook, "webhook");
    AcceptResult r = store.insert(webhook.source(), webhook.eventId(), webhook.eventType(), webhook.signatureDigest(),
        webhook.rawBody(), webhook.signedAt().map(Instant::toEpochMilli).orElse(null),
        webhook.receivedAt().toEpochMilli());
    if (r == AcceptResult.ACCEPTED) {
      onNewWork.forEach(Runnable::run);
    }
    return r;
  }

  /**
   * @param source the source's name
   * @param eventId the event id
   * @return the event's entry, if the inbox holds it
   */
  public Optional<InboxEntry> find(String source, String eventId) {
    return store.find(source, eventId);
  }

  /**
   * @param limit the most to return
   * @return dead letters, oldest first
   */
  public List<InboxEntry> deadLetters(int limit) {
    return store.list(InboxState.DEAD, limit);
  }

  /**
   * Events in one state, oldest first.
   *
   * @param state the state
   * @param limit the most to return, at least 1
   * @return up to {@code limit} events in {@code state}, oldest first
   * @throws IllegalArgumentException if {@code limit} is below 1
   */
  public List<InboxEntry> list(InboxState state, int limit) {
    Objects.requireNonNull(state, "state");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, not " + limit);
    }
    return store.list(state, limit);
  }

  /**
   * Re-drives a dead letter: it becomes PENDING, due now, with a fresh attempt count (its attempt
   * history is kept). The handler then sees the same event id as before.
   *
   * @param source the source's name
   * @param eventId the event id
   * @return true if it was DEAD and is now PENDING; false if it is not a dead letter
   */
  public boolean redrive(String source, String eventId) {
    boolean done = store.redrive(source, eventId, clock.millis());
    if (done) {
      onNewWork.forEach(Runnable::run);
    }
    return done;
  }

  /** @return how many events are in each state */
  public Map<InboxState, Long> counts() {
    return store.counts();
  }

  /** @return the queue length: events PENDING or PROCESSING */
  public long queueLength() {
    Map<InboxState, Long> c = store.counts();
    return c.get(InboxState.PENDING) + c.get(InboxState.PROCESSING);
  }

  /** @return how long the oldest event still PENDING or PROCESSING has waited; zero if none */
  public Duration oldestWaiting() {
    return store.oldestUnfinished().map(t -> Duration.between(t, clock.instant())).filter(d -> !d.isNegative())
        .orElse(Duration.ZERO);
  }

  /**
   * @param source the source's name
   * @param eventId the event id
   * @return every handler run recorded for the event, first first
   */
  public List<HandlerAttempt> attempts(String source, String eventId) {
    return store.attempts(source, eventId).stream().map(a -> new HandlerAttempt(a.run(), a.owner(),
        Instant.ofEpochMilli(a.startedAtMs()), Optional.ofNullable(a.endedAtMs()).map(Instant::ofEpochMilli),
        Optional.ofNullable(a.outcome()), Optional.ofNullable(a.error()), Optional.ofNullable(a.decision()))).toList();
  }

  /**
   * Deletes DONE events that finished more than {@code olderThan} ago, with their history. After
   * that, a redelivery of such an event is no longer recognised by its id (for Standard Webhooks
   * and Stripe the timestamp window still rejects an old replay; GitHub signs no time).
   *
   * @param olderThan how long to keep finished events
   * @return how many were deleted
   */
  public int purgeDone(Duration olderThan) {
    return store.purgeDone(clock.instant().minus(olderThan).toEpochMilli());
  }

  /** @return the clock the inbox stamps events with */
  public Clock clock() {
    return clock;
  }

  InboxStore store() {
    return store;
  }

  /** {@code inbox}, if it can be written: a receiver or processor on a read-only inbox could only fail later. */
  static WebhookInbox writable(WebhookInbox inbox, String user) {
    Objects.requireNonNull(inbox, "inbox");
    if (inbox.store.isReadOnly()) {
      throw new IllegalArgumentException(user + " needs an inbox it can write: open it with"
          + " WebhookInbox.sqlite(directory).open(), not openReadOnly");
    }
    return inbox;
  }

  void onNewWork(Runnable r) {
    onNewWork.add(r);
  }

  void removeOnNewWork(Runnable r) {
    onNewWork.remove(r);
  }

  /** Lets queued writes finish, closes the connections and releases the lock. Idempotent. */
  @Override
  public void close() {
    store.close();
    if (lock != null && lock.isValid()) {
      try {
        lock.release();
        lock.channel().close();
      } catch (IOException e) {
        // the process owns no lock after it exits anyway
      }
    }
  }

  /** Configures an inbox. Not thread-safe. */
  public static final class Builder {
    private final Path dir;
    private final DataSource dataSource;
    private Clock clock = Clock.systemUTC();
    private int queueCapacity = 10_000;
    private int maxBatch = 512;
    private Duration writeTimeout = Duration.ofSeconds(10);

    private Builder(Path dir, DataSource dataSource) {
      this.dir = dir;
      this.dataSource = dataSource;
    }

    /**
     * @param clock stamps received, due and finished times; default {@link Clock#systemUTC()}
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * @param capacity writes that may wait for the writer; default 10,000. When full, an accept
     *     waits up to the write timeout and then fails (the endpoint answers 503)
     * @return this builder
     */
    public Builder writeQueueCapacity(int capacity) {
      if (capacity < 1) {
        throw new IllegalArgumentException("capacity must be positive: " + capacity);
      }
      this.queueCapacity = capacity;
      return this;
    }

    /**
     * @param maxBatch the most writes in one commit; default 512
     * @return this builder
     */
    public Builder maxBatch(int maxBatch) {
      if (maxBatch < 1) {
        throw new IllegalArgumentException("maxBatch must be positive: " + maxBatch);
      }
      this.maxBatch = maxBatch;
      return this;
    }

    /**
     * @param timeout how long a write may wait for a queue place and for its commit; default 10 s
     * @return this builder
     */
    public Builder writeTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "the webhook inbox's writeTimeout is null; give a positive Duration, or leave"
          + " it unset for the default of 10 s");
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("timeout must be positive: " + timeout);
      }
      this.writeTimeout = timeout;
      return this;
    }

    /**
     * Opens the inbox, creating its tables if needed.
     *
     * @return the inbox
     * @throws WebhookInboxException if the store cannot be opened (for SQLite: another process owns
     *     it, or the native library cannot load; the message says what to do)
     */
    public WebhookInbox open() {
      if (dataSource != null) {
        ConnectionSource cs = dataSource::getConnection;
        return new WebhookInbox(new InboxStore(Dialect.POSTGRES, cs, queueCapacity, maxBatch, writeTimeout), null,
            clock);
      }
      FileLock lock = SqliteOpener.lock(dir);
      try {
        InboxStore store = new InboxStore(Dialect.SQLITE, SqliteOpener.source(dir), queueCapacity, maxBatch,
            writeTimeout);
        try {
          store.voidOrphanedLeases(clock.millis());
        } catch (RuntimeException e) {
          store.close();
          throw e;
        }
        return new WebhookInbox(store, lock, clock);
      } catch (RuntimeException e) {
        try {
          lock.release();
          lock.channel().close();
        } catch (IOException ignored) {
          // failing anyway
        }
        throw e;
      }
    }
  }
}
