package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.webhooks.internal.ClaimedEvent;
import dev.idem.webhooks.internal.InboxStore;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two instances on one PostgreSQL inbox claim at the same moment. A claim of N locks up to N rows
 * of each range of the due index (PENDING and due, PROCESSING with an expired lease) with
 * {@code FOR UPDATE SKIP LOCKED} and takes the oldest N of the two: the other range's rows stay
 * locked, unclaimed, until the claim's transaction ends, and the other instance skips them as if
 * they were claimed. Its claim then comes back empty (its workers idle until the next poll) while
 * due events that no one holds sit in the inbox. The one-statement claim before locked only the
 * rows it took. A claim now takes the expired leases first, then the PENDING ones with the limit
 * left, and locks only what it takes: A takes the two expired leases, B the two PENDING events
 * (with the claim above, A took the PENDING ones, due earlier, and B nothing).
 *
 * <p>Deterministic: instance A is held inside its claim's transaction (after the claim statement,
 * at its first attempt-history insert) while instance B claims; then A is let go.
 */
@ExtendWith(PostgresExtension.class)
class PostgresInboxClaimLocksTest {
  private static final byte[] BODY = "{}".getBytes(StandardCharsets.UTF_8);

  @Test
  void aClaimDoesNotHideFromAnotherInstanceTheDueEventsItDidNotTake(PgDatabase db) throws Exception {
    for (int round = 0; round < 5; round++) {
      HoldingDataSource held = new HoldingDataSource(db.dataSource());
      try (WebhookInbox a = WebhookInbox.postgres(held).open();
          WebhookInbox b = WebhookInbox.postgres(db.dataSource()).open()) {
        InboxStore sa = a.store();
        InboxStore sb = b.store();
        String r = "r" + round + "_";
        // Two events claimed by an instance that then died: their leases end at 1,100.
        sa.insert("acme", r + "x1", "order.paid", digest(r + "x1"), List.of(), false, BODY, null, 900);
        sa.insert("acme", r + "x2", "order.paid", digest(r + "x2"), List.of(), false, BODY, null, 901);
        assertEquals(2, sa.claim(2, "dead", 1000, 1100).size(), "the dead instance's claim");
        // Two events received earlier (a provider's late delivery), due before them.
        sa.insert("acme", r + "p1", "order.paid", digest(r + "p1"), List.of(), false, BODY, null, 800);
        sa.insert("acme", r + "p2", "order.paid", digest(r + "p2"), List.of(), false, BODY, null, 801);

        long now = 2000 + round;
        held.arm();
        CompletableFuture<List<ClaimedEvent>> claimA =
            CompletableFuture.supplyAsync(() -> sa.claim(2, "a", now, 9_000_000));
        assertTrue(held.holding.await(30, TimeUnit.SECONDS), "A reached its attempt-history insert");
        List<String> tookB;
        try {
          tookB = sb.claim(2, "b", now, 9_000_000).stream().map(ClaimedEvent::eventId).toList();
        } finally {
          held.release.countDown();
        }
        List<String> tookA = claimA.get(30, TimeUnit.SECONDS).stream().map(ClaimedEvent::eventId).toList();

        assertEquals(List.of(r + "p1", r + "p2"), tookB,
            "round " + round + ": B, claiming while A's claim was open, did not find the two PENDING events"
                + " due, which A did not take: A's claim kept them locked");
        assertEquals(List.of(r + "x1", r + "x2"), tookA, "A takes the expired leases first");
        // Everything ends DONE once: nothing was lost either way.
        for (ClaimedEvent e : sa.claim(10, "c", 10_000_000, 10_000_001)) {
          sa.markDone(e, 10_000_000);
        }
      }
    }
  }

  private static byte[] digest(String id) {
    return ("sig-" + id).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Holds the first insert into the attempt history after {@link #arm()} (that is, inside a
   * claim's transaction, its rows locked) until {@link #release} is counted down.
   */
  static final class HoldingDataSource extends DelegatingDataSource {
    final CountDownLatch holding = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    private volatile boolean armed;

    HoldingDataSource(DataSource delegate) {
      super(delegate);
    }

    void arm() {
      armed = true;
    }

    @Override
    Connection wrap(Connection c) {
      InvocationHandler h = (proxy, m, args) -> {
        Object out = invoke(c, m, args);
        if (m.getName().equals("prepareStatement") && args != null && args[0] instanceof String sql
            && sql.toUpperCase(Locale.ROOT).startsWith("INSERT INTO IDEM_WEBHOOK_ATTEMPTS")) {
          PreparedStatement ps = (PreparedStatement) out;
          InvocationHandler ph = (p2, m2, a2) -> {
            if (m2.getName().startsWith("execute") && armed) {
              armed = false;
              holding.countDown();
              if (!release.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never let the claim go");
              }
            }
            return invoke(ps, m2, a2);
          };
          return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {PreparedStatement.class}, ph);
        }
        return out;
      };
      return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, h);
    }
  }

  /** A DataSource whose connections {@link #wrap} may wrap. */
  abstract static class DelegatingDataSource implements DataSource {
    private final DataSource delegate;

    DelegatingDataSource(DataSource delegate) {
      this.delegate = delegate;
    }

    abstract Connection wrap(Connection c);

    static Object invoke(Object target, Method m, Object[] args) throws Throwable {
      try {
        return m.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }

    @Override
    public Connection getConnection() throws java.sql.SQLException {
      return wrap(delegate.getConnection());
    }

    @Override
    public Connection getConnection(String user, String password) throws java.sql.SQLException {
      return wrap(delegate.getConnection(user, password));
    }

    @Override
    public java.io.PrintWriter getLogWriter() throws java.sql.SQLException {
      return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(java.io.PrintWriter out) throws java.sql.SQLException {
      delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws java.sql.SQLException {
      delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws java.sql.SQLException {
      return delegate.getLoginTimeout();
    }

    @Override
    public java.util.logging.Logger getParentLogger() {
      return java.util.logging.Logger.getLogger("dev.idem.webhooks");
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws java.sql.SQLException {
      return delegate.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws java.sql.SQLException {
      return delegate.isWrapperFor(iface);
    }
  }
}
