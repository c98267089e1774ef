package dev.idem.jdbc.support;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Wraps a DataSource to simulate faults (a full disk: writes and commits throw) and to observe and
 * pause the journal's statements. Each instance has its own switches; nothing is static.
 */
public final class FaultyDataSource extends WrappingDataSource {
  public volatile boolean failWrites;
  public volatile boolean failCommits;
  public final AtomicInteger commits = new AtomicInteger();
  /**
   * Commits of a connection that ran an INSERT, UPDATE or DELETE since its last commit: not the
   * commits that end a read transaction (a store on an app's database ends each read's at once).
   */
  public final AtomicInteger writeCommits = new AtomicInteger();
  public final AtomicInteger inserts = new AtomicInteger();
  public final AtomicInteger syncs = new AtomicInteger();
  /** Statements executed on {@code idem_operation}, by verb (SELECT, INSERT, UPDATE, DELETE). */
  public final java.util.Map<String, AtomicInteger> onOperations = new java.util.concurrent.ConcurrentHashMap<>();
  /** Every statement executed (savepoints, syncs and commits' helpers too), by its first word. */
  public final java.util.Map<String, AtomicInteger> statements = new java.util.concurrent.ConcurrentHashMap<>();
  /** The text of every distinct statement executed, as prepared (for EXPLAIN QUERY PLAN). */
  public final java.util.Set<String> executedSql = java.util.concurrent.ConcurrentHashMap.newKeySet();
  /** If set, the first CHECKPOINT SYNC waits for it. */
  public volatile CountDownLatch holdFirstSync;
  /** Counted down when the first CHECKPOINT SYNC is being held. */
  public final CountDownLatch firstSyncHeld = new CountDownLatch(1);

  public FaultyDataSource(DataSource delegate) {
    super(delegate);
  }

  static SQLException diskFull() {
    return new SQLException("IO Exception: java.io.IOException: No space left on device (simulated)", "HY000", 90028);
  }

  @Override
  protected Connection wrap(Connection c) {
    java.util.concurrent.atomic.AtomicBoolean wrote = new java.util.concurrent.atomic.AtomicBoolean();
    InvocationHandler h = (proxy, m, args) -> {
      switch (m.getName()) {
        case "commit" -> {
          if (failCommits) {
            throw diskFull();
          }
          commits.incrementAndGet();
          if (wrote.getAndSet(false)) {
            writeCommits.incrementAndGet();
          }
        }
        case "prepareStatement" -> {
          PreparedStatement ps = (PreparedStatement) invoke(c, m, args);
          return statement(PreparedStatement.class, ps, (String) args[0], wrote);
        }
        case "createStatement" -> {
          Statement st = (Statement) invoke(c, m, args);
          return statement(Statement.class, st, null, wrote);
        }
        default -> {
        }
      }
      return invoke(c, m, args);
    };
    return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, h);
  }

  private <S extends Statement> S statement(Class<S> type, S target, String preparedSql,
      java.util.concurrent.atomic.AtomicBoolean wrote) {
    InvocationHandler h = (proxy, m, args) -> {
      if (m.getName().startsWith("execute")) {
        String sql = preparedSql != null ? preparedSql : args != null && args.length > 0 ? (String) args[0] : "";
        String verb = sql.strip().toUpperCase(Locale.ROOT);
        executedSql.add(sql);
        boolean write = verb.startsWith("INSERT") || verb.startsWith("UPDATE") || verb.startsWith("DELETE");
        if (failWrites && write) {
          throw diskFull();
        }
        if (write) {
          wrote.set(true);
        }
        statements.computeIfAbsent(verb.substring(0, verb.indexOf(' ') < 0 ? verb.length() : verb.indexOf(' ')),
            k -> new AtomicInteger()).incrementAndGet();
        if (verb.contains("IDEM_OPERATION")) {
          onOperations.computeIfAbsent(verb.substring(0, verb.indexOf(' ') < 0 ? verb.length() : verb.indexOf(' ')),
              k -> new AtomicInteger()).incrementAndGet();
        }
        if (verb.startsWith("INSERT INTO IDEM_OPERATION")) {
          inserts.incrementAndGet();
        }
        if (verb.startsWith("CHECKPOINT SYNC")) {
          syncs.incrementAndGet();
          CountDownLatch hold = holdFirstSync;
          if (hold != null) {
            holdFirstSync = null;
            firstSyncHeld.countDown();
            if (!hold.await(30, TimeUnit.SECONDS)) {
              throw new IllegalStateException("test never released the held sync");
            }
          }
        }
      }
      return invoke(target, m, args);
    };
    return type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, h));
  }
}
