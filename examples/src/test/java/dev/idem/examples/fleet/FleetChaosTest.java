package dev.idem.examples.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idem.examples.childjvm.ChildJvm;
import dev.idem.jdbc.support.PostgresCluster;
import dev.idem.testkit.EffectRequest;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import dev.idem.testkit.Reply;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Issue 30's fleet, under chaos: three instances ({@link FleetChild}, each a child JVM) share one
 * throwaway PostgreSQL journal and submit orders through the outbox plus some inline calls to the
 * reference server, which this test runs. At random moments one is killed with SIGKILL and
 * restarted, under the same owner name (a StatefulSet's pod) or a new one (a Deployment's); the
 * database is restarted twice (fast, then immediate); then submissions stop and the fleet drains.
 *
 * <p>Asserted: 0 lost (every acknowledged submission ends SUCCEEDED), 0 duplicates (one effect per
 * key on the server), 0 stuck (nothing PENDING or IN_FLIGHT after the drain), one payload per key.
 * Measured and printed: how long after each restart the operations its dead incarnation held were
 * claimed again. A same-name restart's dispatcher takes them back at its first poll, without
 * {@code resumePending}; a new name waits for the leases to expire.
 *
 * <p>The server's action takes 100 to 400 ms, so that kills find operations on the wire.
 *
 * <p>Every build runs a short version ({@code idem.fleet.seconds}, default 25, with
 * {@code idem.fleet.kills} 4); {@code -Pfleet-chaos} runs 300 s with 35 kills. Skipped where no
 * PostgreSQL binaries are installed. {@code -Didem.fleet.seed=N} repeats a run's schedule.
 */
class FleetChaosTest {
  private static final int INSTANCES = 3;

  /** One instance slot: the pod it stands for, and its current incarnation. */
  private static final class Slot {
    final String pod;
    String owner;
    Process process;
    volatile Path log;
    volatile int incarnation;

    Slot(String pod) {
      this.pod = pod;
      this.owner = pod;
    }
  }

  /** How long after a restart the rows its dead incarnation held were all claimed again. */
  record Takeover(boolean sameName, int rows, long readyMillis, long lastClaimMillis, List<Long> claimMillis) {
  }

  @Test
  void aFleetLosesNothingDuplicatesNothingAndTakesItsWorkBackThroughKillsAndDatabaseRestarts(@TempDir Path dir)
      throws Exception {
    Optional<Path> bin = PostgresCluster.findBinaries();
    assumeTrue(bin.isPresent(), "no PostgreSQL binaries under /usr/lib/postgresql");
    int seconds = Integer.getInteger("idem.fleet.seconds", 25);
    int kills = Integer.getInteger("idem.fleet.kills", 4);
    Duration lease = Duration.ofSeconds(Long.getLong("idem.fleet.leaseSeconds", 10));
    long seed = Long.getLong("idem.fleet.seed", System.nanoTime());
    Random random = new Random(seed);
    System.out.println("fleet chaos: " + seconds + " s, " + kills + " kills, lease " + lease + ", seed " + seed);

    try (PostgresCluster pg = PostgresCluster.start(bin.get());
        IdempotentServer server = IdempotentServer.builder().handler(FleetChaosTest::slowEffect).start()) {
      String database = pg.createDatabase();
      PGSimpleDataSource db = pg.dataSource(database);
      Path stop = dir.resolve("stop");
      List<Slot> slots = new ArrayList<>();
      for (int i = 0; i < INSTANCES; i++) {
        Slot s = new Slot("pod-" + i);
        start(s, pg, database, server, lease, stop, dir);
        slots.add(s);
      }
      for (Slot s : slots) {
        awaitReady(s, Duration.ofSeconds(60));
      }

      // The schedule: kills at random moments in the first 70% (so that the last new-name
      // restart's leases run out before the drain), the database restarted at 35% and 60%.
      long t0 = System.nanoTime();
      long chaosNanos = TimeUnit.SECONDS.toNanos(seconds);
      TreeMap<Long, String> events = new TreeMap<>();
      for (int k = 0; k < kills; k++) {
        long at;
        do {
          at = (long) (chaosNanos * (0.1 + 0.6 * random.nextDouble()));
        } while (events.containsKey(at));
        events.put(at, "kill");
      }
      events.put((long) (chaosNanos * 0.35), "postgres fast");
      events.put((long) (chaosNanos * 0.60), "postgres immediate");
      List<Takeover> takeovers = Collections.synchronizedList(new ArrayList<>());
      List<Thread> watchers = new ArrayList<>();
      List<String> outages = new ArrayList<>();
      int renamed = 0;
      for (Map.Entry<Long, String> e : events.entrySet()) {
        sleepUntil(t0 + e.getKey());
        if (e.getValue().startsWith("postgres")) {
          String mode = e.getValue().substring("postgres ".length());
          long before = System.nanoTime();
          pg.restart(mode);
          outages.add(mode + " " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before) + " ms");
          continue;
        }
        Slot s = slots.get(random.nextInt(INSTANCES));
        s.process.destroyForcibly();  // SIGKILL
        s.process.waitFor();
        Map<String, Long> held = heldBy(db, s.owner);
        boolean sameName = random.nextBoolean();
        if (!sameName) {
          s.owner = s.pod + "-r" + (++renamed);
        }
        long restartedAt = System.nanoTime();
        start(s, pg, database, server, lease, stop, dir);
        Slot watched = s;
        int incarnation = s.incarnation;
        Thread w = new Thread(() -> takeovers.add(watch(db, held, watched, incarnation, sameName, restartedAt,
            lease.plusSeconds(30))), "takeover-watcher");
        w.start();
        watchers.add(w);
      }
      sleepUntil(t0 + chaosNanos);

      // Drain: no new submissions; every instance keeps delivering until nothing is left.
      Files.createFile(stop);
      long drainStart = System.nanoTime();
      boolean drained = false;
      while (System.nanoTime() - drainStart < lease.plusSeconds(90).toNanos()) {
        if (countUnfinished(db) == 0) {
          drained = true;
          break;
        }
        Thread.sleep(100);
      }
      long drainMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - drainStart);
      for (Thread w : watchers) {
        w.join(TimeUnit.SECONDS.toMillis(lease.getSeconds() + 60));
      }
      for (Slot s : slots) {
        s.process.destroyForcibly();
        s.process.waitFor();
      }

      // What the instances acknowledged, what the journal holds, what the server did.
      Set<String> acked = new HashSet<>();
      try (var logs = Files.list(dir)) {
        for (Path log : logs.filter(p -> p.getFileName().toString().endsWith(".log")).toList()) {
          Files.readAllLines(log).stream().filter(l -> l.startsWith("ACK ")).forEach(l -> acked.add(l.substring(4)));
        }
      }
      Map<String, String> states = states(db);
      Map<String, Long> byState = states.values().stream()
          .collect(Collectors.groupingBy(x -> x, TreeMap::new, Collectors.counting()));
      long lost = acked.stream().filter(k -> !"SUCCEEDED".equals(states.get(k))).count();
      long stuck = states.values().stream().filter(x -> x.equals("PENDING") || x.equals("IN_FLIGHT")).count();
      long duplicates = states.keySet().stream().filter(k -> server.effectCount(k) > 1).count();
      long succeededWithoutEffect = states.entrySet().stream()
          .filter(x -> x.getValue().equals("SUCCEEDED") && server.effectCount(x.getKey()) != 1).count();
      Map<String, Set<String>> payloads = new HashMap<>();
      for (ReceivedRequest r : server.recordedRequests()) {
        r.keyHeader().ifPresent(k -> payloads.computeIfAbsent(k, x -> new HashSet<>()).add(r.body()));
      }
      long twoPayloads = payloads.values().stream().filter(p -> p.size() > 1).count();
      long effectsOfSucceeded = states.entrySet().stream().filter(x -> x.getValue().equals("SUCCEEDED"))
          .mapToLong(x -> server.effectCount(x.getKey())).sum();
      long effectsElsewhere = server.totalEffects() - effectsOfSucceeded;  // on a key not SUCCEEDED, or none

      String report = report(seconds, kills, lease, seed, acked.size(), states.size(), byState, lost, duplicates, stuck,
          twoPayloads, succeededWithoutEffect, effectsElsewhere, drained, drainMillis, outages, takeovers, server.requestCount());
      System.out.println(report);
      Path target = Path.of("target");
      if (Files.isDirectory(target)) {
        Files.writeString(target.resolve("fleet-chaos-report.txt"), report);
      }

      assertTrue(acked.size() > 0, "the fleet acknowledged submissions");
      assertTrue(drained, "drained within " + lease.plusSeconds(90) + ": " + byState);
      assertEquals(0, lost, "acknowledged submissions that did not end SUCCEEDED");
      assertEquals(0, duplicates, "keys with more than one effect on the server");
      assertEquals(0, stuck, "operations left PENDING or IN_FLIGHT");
      assertEquals(0, twoPayloads, "keys sent with two payloads");
      assertEquals(0, succeededWithoutEffect, "SUCCEEDED operations without exactly one effect");
      assertEquals(0, effectsElsewhere, "effects of operations the journal does not hold as SUCCEEDED");
      for (Takeover t : takeovers) {
        if (t.sameName() && t.rows() > 0 && t.lastClaimMillis() >= 0) {
          assertTrue(t.lastClaimMillis() < lease.toMillis(),
              "a same-name restart took its rows back at lease expiry, not at once: " + t);
        }
      }
    }
  }

  /**
   * The server's action takes 100 to 400 ms, as a payment API's might: so that a kill finds
   * operations on the wire, which the next incarnation must take back.
   */
  private static Reply slowEffect(EffectRequest request) {
    try {
      Thread.sleep(100 + ThreadLocalRandom.current().nextInt(300));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return Reply.json(201, "{\"effect\":" + request.effectNumber() + "}");
  }

  private static void start(Slot s, PostgresCluster pg, String database, IdempotentServer server, Duration lease,
      Path stop, Path dir) throws Exception {
    s.incarnation++;
    s.log = dir.resolve(s.pod + "-" + s.incarnation + ".log");
    s.process = ChildJvm.builder(FleetChild.class, List.of(Integer.toString(pg.port()), database,
            server.url("/").toString(), s.owner, Long.toString(lease.toMillis()), stop.toString()))
        .redirectOutput(s.log.toFile()).start();
  }

  private static void awaitReady(Slot s, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (readyAt(s.log) > 0) {
        return;
      }
      assertTrue(s.process.isAlive(), s.pod + " died while starting:\n" + Files.readString(s.log));
      Thread.sleep(20);
    }
    throw new AssertionError(s.pod + " not ready after " + timeout + ":\n" + Files.readString(s.log));
  }

  /** When the child printed READY (epoch milliseconds), or 0 if it has not yet. */
  private static long readyAt(Path log) throws Exception {
    if (!Files.exists(log)) {
      return 0;
    }
    return Files.readAllLines(log).stream().filter(l -> l.startsWith("READY ")).findFirst()
        .map(l -> Long.parseLong(l.substring(6).strip())).orElse(0L);
  }

  /**
   * Watches the rows a killed incarnation held until each is claimed again (its generation moves
   * or it leaves IN_FLIGHT), or the timeout; the times count from the restart. A measurement cut
   * short by the next kill of the same slot is marked with a negative last claim.
   */
  private static Takeover watch(PGSimpleDataSource db, Map<String, Long> held, Slot slot, int incarnation,
      boolean sameName, long restartedAt, Duration timeout) {
    Map<String, Long> claimedAfter = new HashMap<>();
    long readyMillis = -1;
    long restartEpochMillis = System.currentTimeMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restartedAt);
    Path log = slot.log;
    boolean cutShort = false;
    while (claimedAfter.size() < held.size() && System.nanoTime() - restartedAt < timeout.toNanos()) {
      if (slot.incarnation != incarnation) {
        cutShort = true;  // killed again before it took them all back
        break;
      }
      try {
        if (readyMillis < 0) {
          long ready = readyAt(log);
          readyMillis = ready > 0 ? ready - restartEpochMillis : -1;
        }
        long now = System.nanoTime();
        for (Map.Entry<String, Long> e : movedOn(db, held).entrySet()) {
          claimedAfter.putIfAbsent(e.getKey(), TimeUnit.NANOSECONDS.toMillis(now - restartedAt));
        }
        Thread.sleep(20);
      } catch (SQLException ignored) {
        // the database is restarting: look again
      } catch (Exception e) {
        break;
      }
    }
    List<Long> times = new ArrayList<>(claimedAfter.values());
    Collections.sort(times);
    boolean complete = !cutShort && claimedAfter.size() == held.size();
    long last = complete ? (times.isEmpty() ? 0 : times.get(times.size() - 1)) : -1;
    return new Takeover(sameName, held.size(), readyMillis, last, times);
  }

  /** The IN_FLIGHT rows under {@code owner}, by key, with their generation. */
  private static Map<String, Long> heldBy(PGSimpleDataSource db, String owner) throws SQLException {
    Map<String, Long> held = new HashMap<>();
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT op_key, generation FROM idem_operation WHERE owner = ? AND state = 'IN_FLIGHT'")) {
      ps.setString(1, owner);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          held.put(rs.getString(1), rs.getLong(2));
        }
      }
    }
    return held;
  }

  /** Those of {@code held} that were claimed again since, or left IN_FLIGHT. */
  private static Map<String, Long> movedOn(PGSimpleDataSource db, Map<String, Long> held) throws SQLException {
    Map<String, Long> moved = new HashMap<>();
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT op_key, generation, state FROM idem_operation WHERE op_key = ANY (?)")) {
      ps.setArray(1, c.createArrayOf("varchar", held.keySet().toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          if (rs.getLong(2) > held.get(rs.getString(1)) || !rs.getString(3).equals("IN_FLIGHT")) {
            moved.put(rs.getString(1), rs.getLong(2));
          }
        }
      }
    }
    return moved;
  }

  private static long countUnfinished(PGSimpleDataSource db) {
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT COUNT(*) FROM idem_operation WHERE state IN ('PENDING', 'IN_FLIGHT')");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      return -1;
    }
  }

  private static Map<String, String> states(PGSimpleDataSource db) throws SQLException {
    Map<String, String> states = new HashMap<>();
    try (Connection c = db.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT op_key, state FROM idem_operation");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        states.put(rs.getString(1), rs.getString(2));
      }
    }
    return states;
  }

  private static void sleepUntil(long nanoTime) throws InterruptedException {
    long left = nanoTime - System.nanoTime();
    if (left > 0) {
      TimeUnit.NANOSECONDS.sleep(left);
    }
  }

  private static String report(int seconds, int kills, Duration lease, long seed, int acked, int operations,
      Map<String, Long> byState, long lost, long duplicates, long stuck, long twoPayloads, long withoutEffect,
      long effectsElsewhere, boolean drained, long drainMillis, List<String> outages, List<Takeover> takeovers, int requests) {
    StringBuilder b = new StringBuilder();
    b.append("fleet chaos report: ").append(seconds).append(" s, ").append(kills).append(" kills, lease ")
        .append(lease).append(", seed ").append(seed).append('\n');
    b.append("  operations ").append(operations).append(" (acknowledged ").append(acked).append("), by state ")
        .append(byState).append(", server requests ").append(requests).append('\n');
    b.append("  lost ").append(lost).append(", duplicates ").append(duplicates).append(", stuck ").append(stuck)
        .append(", keys with two payloads ").append(twoPayloads).append(", SUCCEEDED without one effect ")
        .append(withoutEffect).append(", effects of operations not SUCCEEDED ").append(effectsElsewhere).append('\n');
    b.append("  drained: ").append(drained).append(", ").append(drainMillis).append(" ms after the chaos ended\n");
    b.append("  database restarts: ").append(outages).append('\n');
    for (boolean same : new boolean[] {true, false}) {
      List<Takeover> ts = takeovers.stream().filter(t -> t.sameName() == same).toList();
      List<Long> last = ts.stream().filter(t -> t.rows() > 0 && t.lastClaimMillis() >= 0)
          .map(Takeover::lastClaimMillis).sorted().toList();
      List<Long> ready = ts.stream().filter(t -> t.readyMillis() >= 0).map(Takeover::readyMillis).sorted().toList();
      b.append("  ").append(same ? "same-name" : "new-name").append(" restarts: ").append(ts.size())
          .append(" (with rows held: ").append(ts.stream().filter(t -> t.rows() > 0).count())
          .append(", rows ").append(ts.stream().mapToInt(Takeover::rows).sum())
          .append(", cut short by the next kill: ").append(ts.stream().filter(t -> t.lastClaimMillis() < 0).count())
          .append(")\n");
      b.append("    ms from restart to the last held row claimed again: ").append(distribution(last)).append('\n');
      b.append("    ms from restart to the dispatcher started (JVM start, pool, journal): ")
          .append(distribution(ready)).append('\n');
      List<Long> afterReady = ts.stream().filter(t -> t.rows() > 0 && t.lastClaimMillis() >= 0 && t.readyMillis() >= 0)
          .map(t -> t.lastClaimMillis() - t.readyMillis()).sorted().toList();
      b.append("    ms from the dispatcher started to the last held row claimed again: ")
          .append(distribution(afterReady)).append('\n');
    }
    return b.toString();
  }

  private static String distribution(List<Long> sorted) {
    if (sorted.isEmpty()) {
      return "none";
    }
    return "n=" + sorted.size() + " min " + sorted.get(0) + " median " + sorted.get(sorted.size() / 2)
        + " p95 " + sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(sorted.size() * 0.95) - 1))
        + " max " + sorted.get(sorted.size() - 1) + " all " + sorted;
  }
}
