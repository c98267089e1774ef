package dev.idem.server;

import dev.idem.server.spi.Admission;
import dev.idem.server.support.ForwardingStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.sqlite.SQLiteDataSource;

/**
 * A child JVM for {@link GuardStoreDownLogTest}: the guard itself, with no filter in front, through
 * {@code args[1]} requests while its store is down. Mode {@code args[0]}: {@code retries}, a store
 * that takes no completion and no release, so each request's completion (half of them stored, half
 * released) is tried again in the background until it is given up; or {@code transactional
 * <sqlite file>}, transactional runs whose commit fails, each rolled back and answered 503. Its log
 * (slf4j-simple at WARN, to stderr) is what the test reads.
 */
public final class GuardStoreDownLogChild {
  private GuardStoreDownLogChild() {}

  public static void main(String[] args) throws Exception {
    int requests = Integer.parseInt(args[1]);
    if (args[0].equals("retries")) {
      retries(requests);
    } else {
      transactional(requests, Path.of(args[2]));
    }
  }

  private static void retries(int requests) throws Exception {
    CountDownLatch ended = new CountDownLatch(requests);
    IdempotencyGuard guard = IdempotencyGuard.builder(new ForwardingStore() {
      @Override
      public boolean complete(RecordId id, long generation, String owner, Instant now,
          dev.idem.server.spi.StoredResponse response, Instant expiresAt) {
        throw new IdempotencyStoreException("store down", null);
      }

      @Override
      public boolean release(RecordId id, long generation, String owner) {
        throw new IdempotencyStoreException("store down", null);
      }
    }).lease(Duration.ofMillis(300)).listener(event -> {
      if (event instanceof GuardEvent.Completed) {
        ended.countDown();
      }
    }).build();
    try {
      for (int i = 0; i < requests; i++) {
        Claim claim = ((Admission.Proceed) guard.admit(request("k-" + i))).claim();
        try {
          if (i % 2 == 0) {
            guard.complete(claim, CapturedResponse.json(201, "{}"));
          } else {
            guard.abandon(claim);
          }
        } catch (IdempotencyStoreException expected) {
          // tried again in the background
        }
      }
      if (!ended.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("completions not given up: " + ended.getCount() + " left");
      }
    } finally {
      guard.close();
    }
    System.out.println("ended " + requests);
  }

  private static void transactional(int requests, Path file) throws Exception {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + file.toAbsolutePath());
    ds.setBusyTimeout(20_000);
    TreeMap<Integer, Integer> statuses = new TreeMap<>();
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(file);
        IdempotencyGuard guard = IdempotencyGuard.builder(store).build();
        Connection real = ds.getConnection()) {
      // The app's database fails every commit (a disk full, say): every run is rolled back.
      Connection failing = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
          new Class<?>[] {Connection.class}, (proxy, method, arguments) -> {
            if (method.getName().equals("commit")) {
              throw new SQLException("disk I/O error");
            }
            try {
              return method.invoke(real, arguments);
            } catch (InvocationTargetException e) {
              throw e.getCause();
            }
          });
      for (int i = 0; i < requests; i++) {
        GuardResponse r = guard.inTransaction(failing, request("t-" + i),
            (connection, claim, body) -> CapturedResponse.json(201, "{}"));
        statuses.merge(r.status(), 1, Integer::sum);
      }
    }
    System.out.println("statuses " + statuses);
  }

  private static GuardRequest request(String key) {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of(key), "tenant-1",
        GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)));
  }
}
