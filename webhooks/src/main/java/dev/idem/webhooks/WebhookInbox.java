package dev.idem.webhooks;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import dev.idem.storage.Dialect;
import dev.idem.storage.StoreOpener;
import dev.idem.storage.Layout;
import dev.idem.webhooks.internal.InboxStore;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
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
 * accepts share commits (group commit, on the same storage layer as the journal and the guard).
 * PostgreSQL takes a connection from the DataSource per call. A known event id ({@link AcceptResult#DUPLICATE},
 * or {@link AcceptResult#CONFLICT} when the stored event has another payload or type) or an already accepted signature
 * ({@link AcceptResult#REPLAY}; for a source with several secrets that does not sign its event id,
 * the signed content's MAC under any of them) inserts no event (a duplicate or conflict leaves only
 * what replay defence needs: see {@link AcceptResult#DUPLICATE}). Events are kept until
 * {@link #purgeDone} removes finished ones; deduplication by id reaches back exactly as far as the
 * events kept.
 *
 * <p>Embedded: the directory gets owner-only permissions and holds {@code inbox.db} (WAL, checked
 * at open; every durable write synced before it returns, by a sync of the {@code -wal} file after
 * each group commit; busy timeout 10 s), {@code inbox.lock}, which this process locks
 * while the inbox is open (a second process fails to open it), as it locks
 * {@code inbox.db.idem-webhook-inbox.lock} (the lock any open of the inbox on that file takes), {@code inbox.id} (the inbox's id,
 * also in the database: a deleted, emptied or swapped database is refused rather than silently
 * replaced by an empty one) and {@code inbox.open} (present while open). SQLite's integrity check
 * and a check of the write-ahead log run at open: a damaged inbox is refused with what to do. Since the lock proves the last owner is dead,
 * events it was processing are due again at once. {@link #openReadOnly} reads it beside its
 * owner, for inspection tools such as the {@code idem} CLI.
 *
 * <p>Thread-safe. Methods throw {@link WebhookInboxException} when the store fails.
 */
public final class WebhookInbox implements AutoCloseable {
  private final InboxStore store;
  private final Clock clock;
  private final List<Runnable> onNewWork = new CopyOnWriteArrayList<>();

  private WebhookInbox(InboxStore store, Clock clock) {
    this.store = store;
    this.clock = clock;
  }

  /** The embedded inbox's files in {@code dir}: the names earlier versions used. */
  private static Layout layout(Path dir) {
    return new Layout(dir, "inbox.db", "inbox", "webhook inbox", "WebhookInbox", true);
  }

  private static StoreOpener opener(Clock clock) {
    // Every inbox write is SYNC; the interval only bounds a write no inbox makes.
    return new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), clock);
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
   * <p>All its reads are one snapshot, taken by the first (counts and listings agree); events
   * accepted later are seen by an inbox opened later. Keep it open only as long as one inspection
   * needs: while it is open, SQLite cannot restart the owner's {@code -wal} file, which then grows.
   *
   * @param directory an embedded inbox's directory, as given to {@link #sqlite}
   * @return the inbox, read-only; close it when done
   * @throws WebhookInboxException if the directory holds no inbox, or it cannot be read
   */
  public static WebhookInbox openReadOnly(Path directory) {
    Objects.requireNonNull(directory, "the webhook inbox directory is null; give the directory where inbox.db"
        + " lives");
    Path dir = directory.toAbsolutePath().normalize();
    try {
      return opener(Clock.systemUTC()).openEmbeddedReadOnly(layout(dir), (name, dialect, store, version, opened) ->
          new WebhookInbox(new InboxStore(dialect, store, opened, name), Clock.systemUTC()));
    } catch (IdempotencyException e) {
      throw new WebhookInboxException(e.getMessage(), e);
    }
  }

  /**
   * An inbox in PostgreSQL, shared by every instance that opens it. Tables are created if missing,
   * and upgraded by versioned migrations.
   *
   * @param dataSource connections to the database, a pooling one: each call takes one
   * @return a builder
   */
  public static Builder postgres(DataSource dataSource) {
    return new Builder(null, Objects.requireNonNull(dataSource, "the webhook inbox's dataSource is null; give a"
        + " (pooling) DataSource of the PostgreSQL database, or use WebhookInbox.sqlite(directory)"));
  }

  /**
   * Stores a verified delivery, durably, before returning. It is stamped received, and due, by this
   * inbox's {@linkplain #clock() clock}, not by the time the source verified it
   * ({@link VerifiedWebhook#receivedAt()}).
   *
   * @param webhook what {@link WebhookSource#verify} returned
   * @return ACCEPTED (stored, will be processed), DUPLICATE, REPLAY or CONFLICT (the id of a stored event
   *     with another payload or type); nothing is stored but for ACCEPTED (a new event, or the
   *     resend of an event whose stored payload fails its checksum, stored in its place)
   * @throws WebhookInboxException if it could not be stored durably: nothing may be acknowledged
   */
  public AcceptResult accept(VerifiedWebhook webhook) {
    Objects.requireNonNull(webhook, "webhook");
    // Stamped by the inbox's clock, as its builder promises, not by the source's (webhook.receivedAt(),
    // which follows the provider's signing time): the processor reads due times on the inbox's clock
    // by default, and an event stamped by a source clock ahead of it was stored, answered 200, and
    // never found due.
    AcceptResult r = store.insert(webhook.source(), webhook.eventId(), webhook.eventType(), webhook.signatureDigest(),
        webhook.otherSignatureDigests(), webhook.idSigned(), webhook.rawBody(), webhook.signedAt().map(Instant::toEpochMilli).orElse(null),
        clock.millis());
    if (r == AcceptResult.ACCEPTED) {
      onNewWork.forEach(Runnable::run);
    }
    return r;
  }

  /**
   * {@return the event's entry, if the inbox holds it}
   *
   * @param source the source's name
   * @param eventId the event id
   * @throws WebhookInboxException if the inbox cannot be read, or the stored event fails its
   *     checksum (its type or payload changed on disk after it was accepted; the processor makes it
   *     a dead letter, never handing it to a handler)
   */
  public Optional<InboxEntry> find(String source, String eventId) {
    return store.find(source, eventId);
  }

  /**
   * The dead letters, as {@link #list(InboxState, int) list(InboxState.DEAD, limit)}.
   *
   * @param limit the most to return, at least 1
   * @return dead letters, oldest first
   * @throws IllegalArgumentException if {@code limit} is below 1 (SQLite would read a negative
   *     limit as none, and list every dead letter)
   */
  public List<InboxEntry> deadLetters(int limit) {
    return list(InboxState.DEAD, limit);
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
    return list(state, null, limit);
  }

  /**
   * The next page of events in one state: those after {@code after} in the order of
   * {@link #list(InboxState, int)} (oldest received first, then by source and event id). A listing
   * of any length is read a page at a time, each call given the last entry of the page before, so
   * that no more than one page is held in memory. Pages of an inbox opened read-only
   * ({@link #openReadOnly}) all come from its one snapshot; on an inbox being written, an event
   * that changes state between two pages may be missed or appear in a later listing of its new
   * state, never twice in one state's pages.
   *
   * @param state the state
   * @param after the last entry of the previous page (its received time, source and event id are
   *     what count), or null for the first page
   * @param limit the most to return, at least 1
   * @return up to {@code limit} events in {@code state} after {@code after}, oldest first; fewer
   *     than {@code limit} only at the end
   * @throws IllegalArgumentException if {@code limit} is below 1
   * @throws WebhookInboxException as {@link #find} does (a damaged event fails the whole page:
   *     {@link #page} marks it instead)
   */
  public List<InboxEntry> list(InboxState state, InboxEntry after, int limit) {
    Objects.requireNonNull(state, "state");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, not " + limit);
    }
    return store.list(state, after, limit);
  }

  /**
   * The next page of events in one state, as {@link #list(InboxState, InboxEntry, int)} reads it,
   * for an operator's listing: an event that fails its checksum (its type or payload changed on
   * disk after it was accepted) is listed in its place and marked ({@link InboxPage#damaged})
   * instead of failing the read, so that one damaged event, which the processor makes a dead letter, does not hide the
   * others. Give the page's {@link InboxPage#last} as {@code after} to read the next one. Pages of
   * an inbox opened read-only all come from its one snapshot, as for {@code list}.
   *
   * @param state the state
   * @param after the last event of the previous page ({@link InboxPage#last}), or null for the first
   *     page
   * @param limit the most events to read, intact and damaged together, at least 1
   * @return up to {@code limit} events in {@code state} after {@code after}, oldest first; fewer
   *     than {@code limit} only at the end
   * @throws NullPointerException if {@code state} is null
   * @throws IllegalArgumentException if {@code limit} is below 1
   * @throws WebhookInboxException if the inbox cannot be read
   */
  public InboxPage page(InboxState state, InboxEntry after, int limit) {
    Objects.requireNonNull(state, "state");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, not " + limit);
    }
    return store.page(state, after, limit);
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

  /**
   * How many events are in each state. It counts every event the inbox holds, the DONE ones kept
   * for deduplication too (most of a long-running inbox): for monitoring, count only the states
   * that matter with {@link #counts(Set)}, as the gauges and {@link #queueLength} do.
   *
   * @return every state, with how many events are in it
   * @throws WebhookInboxException if the inbox cannot be read
   */
  public Map<InboxState, Long> counts() {
    return store.counts(EnumSet.allOf(InboxState.class));
  }

  /**
   * How many events are in each of {@code states}, in one read. It reads only those states' entries
   * of an index (never a payload), so its cost grows with the events in those states, not with the
   * inbox: leaving DONE out, a count of the queue and the dead letters costs nothing for the
   * finished events kept. With a backlog it still reads every queued event. On an embedded inbox
   * reads share the connection that accepts deliveries, so an accept waits while a count runs.
   *
   * @param states the states to count
   * @return each of {@code states}, with how many events are in it (zero if none); empty if
   *     {@code states} is
   * @throws NullPointerException if {@code states} is null or holds null
   * @throws WebhookInboxException if the inbox cannot be read
   */
  public Map<InboxState, Long> counts(Set<InboxState> states) {
    Objects.requireNonNull(states, "states");
    return store.counts(states);
  }

  /**
   * The bytes the inbox takes on disk: the SQLite database and {@code -wal} files, or its tables
   * with their indexes on PostgreSQL ({@code pg_total_relation_size}). Reads file sizes or asks
   * PostgreSQL on a connection of its own; never waits for the inbox's writes. Bound as the gauge
   * {@code idem.storage.size} by {@link dev.idem.webhooks.metrics.MicrometerWebhookMetrics}.
   *
   * @return the bytes, or -1 if they cannot be measured
   * @throws WebhookInboxException if the files or the database cannot be read
   */
  public long storageSize() {
    return store.storageSize();
  }

  /**
   * {@return the queue length: events PENDING or PROCESSING, counted as {@link #counts(Set)} does}
   *
   * @throws WebhookInboxException if the inbox cannot be read
   */
  public long queueLength() {
    Map<InboxState, Long> c = store.counts(EnumSet.of(InboxState.PENDING, InboxState.PROCESSING));
    return c.get(InboxState.PENDING) + c.get(InboxState.PROCESSING);
  }

  /**
   * Reads the first entry of each queued state in an index, however long the queue.
   *
   * @return how long the oldest event still PENDING or PROCESSING has waited; zero if none
   * @throws WebhookInboxException if the inbox cannot be read
   */
  public Duration oldestWaiting() {
    return store.oldestUnfinished().map(t -> Duration.between(t, clock.instant())).filter(d -> !d.isNegative())
        .orElse(Duration.ZERO);
  }

  /**
   * {@return every handler run recorded for the event, first first}
   *
   * @param source the source's name
   * @param eventId the event id
   */
  public List<HandlerAttempt> attempts(String source, String eventId) {
    return store.attempts(source, eventId).stream().map(a -> new HandlerAttempt(a.run(), a.owner(),
        Instant.ofEpochMilli(a.startedAtMs()), Optional.ofNullable(a.endedAtMs()).map(Instant::ofEpochMilli),
        Optional.ofNullable(a.outcome()), Optional.ofNullable(a.error()), Optional.ofNullable(a.decision()))).toList();
  }

  /**
   * Deletes DONE events that finished more than {@code olderThan} ago and, for a scheme that signs a
   * time, were signed more than {@code olderThan} (and one second, the window's granularity) ago,
   * with their history. An event's signed time is that of the latest delivery of it the inbox
   * answered: a provider's retry signed again later (answered duplicate) or a conflicting delivery
   * under its id moves it forward, so that a replay of that later delivery is outside its window
   * too once the event is purged. After that, a redelivery or replay of such an event is no longer recognised
   * by its id nor its signature: only the timestamp window still refuses it, and only once its
   * signed time is more than the source's tolerance ago. Give an {@code olderThan} of at least the
   * largest {@link WebhookSource#tolerance()} of the sources writing to this inbox (300 s by
   * default; days, for the usual retention, is far more), and a replay of a purged event is outside
   * its window, even from a sender whose clock ran ahead of ours (its signed time is what counts, not
   * when we finished it, which is why events signed less than {@code olderThan} ago are kept). With
   * less, a replay still inside the window is accepted and handled again. GitHub and a
   * {@link GenericHmac} without a timestamp header sign no time: nothing refuses a replay of a
   * purged event of theirs, so keep those as long as the sender may redeliver.
   *
   * @param olderThan how long to keep finished events, after they finished and after they were
   *     signed; at least the sources' tolerance for the replay defence to hold
   * @return how many were deleted
   * @throws WebhookInboxException if the inbox was opened read-only, or the delete failed
   */
  public int purgeDone(Duration olderThan) {
    long before = clock.instant().minus(olderThan).toEpochMilli();
    // The window compares whole seconds: a time signed in the second just past the bound may
    // still be inside it for a moment, so the signed-time bound is one second earlier.
    return store.purgeDone(before, before - 1000);
  }

  /** {@return the clock the inbox stamps events with} */
  public Clock clock() {
    return clock;
  }

  InboxStore store() {
    return store;
  }

  /** An inbox on {@code store}, opened by the caller: for tests that record the statements it runs. */
  static WebhookInbox over(InboxStore store, Clock clock) {
    return new WebhookInbox(store, clock);
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

  /** Commits what is pending, closes the connection and releases the lock. Idempotent. */
  @Override
  public void close() {
    store.close();
  }

  /** Configures an inbox. Not thread-safe. */
  public static final class Builder {
    private final Path dir;
    private final DataSource dataSource;
    private Clock clock = Clock.systemUTC();

    private Builder(Path dir, DataSource dataSource) {
      this.dir = dir;
      this.dataSource = dataSource;
    }

    /**
     * Sets the clock that stamps received, due and finished times.
     *
     * @param clock stamps received, due and finished times; default {@link Clock#systemUTC()}
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
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
      try {
        if (dataSource != null) {
          return opener(clock).openDataSource(dataSource, (name, dialect, store, version, opened) -> {
            if (dialect != Dialect.POSTGRESQL) {
              throw new JournalException("WebhookInbox.postgres needs a PostgreSQL DataSource, not " + dialect
                  + " (for one process, use WebhookInbox.sqlite(directory))", null);
            }
            return new WebhookInbox(new InboxStore(dialect, store, opened, name), clock);
          });
        }
        return opener(clock).openEmbedded(layout(dir), (name, dialect, store, version, opened) -> {
          InboxStore inbox = new InboxStore(dialect, store, opened, name);
          // This process holds the lock: the last owner is dead, and its leases with it.
          inbox.voidOrphanedLeases(clock.millis());
          return new WebhookInbox(inbox, clock);
        });
      } catch (IdempotencyException e) {
        throw new WebhookInboxException(e.getMessage(), e);
      }
    }
  }
}
