package dev.idem.bench;

import dev.idem.jdbc.support.PostgresCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import okhttp3.OkHttpClient;

/**
 * The server side's part of the run: the guard over HTTP (bare handler, guard with the in-memory,
 * SQLite and PostgreSQL stores) and verified webhooks into the SQLite inbox (against a bare 2xx
 * handler), all at {@link #THREADS} client threads, in slices that rotate the rows like the client
 * part does; ratios are medians of per-slice ratios to the bare row of the same group. G1 and W1
 * are read from them.
 */
final class ServerBenchmark {
  /** Client threads of the server rows (issue 28: 8). */
  static final int THREADS = 8;

  private ServerBenchmark() {
  }

  /**
   * Runs the guard and webhook groups the row filter selects (blank, or a list naming
   * {@code guard} or {@code webhook}) and returns their tables and goals as markdown.
   */
  static String run(OkHttpClient base, Path work, String rowFilter, int slices, long sliceMillis, long warmupMillis)
      throws Exception {
    String filter = rowFilter == null ? "" : rowFilter.toLowerCase(Locale.ROOT);
    StringBuilder md = new StringBuilder();
    if (filter.isBlank() || filter.contains("guard")) {
      Optional<Path> pgBin = PostgresCluster.findBinaries();
      PostgresCluster cluster = null;
      String skipped = null;
      if (pgBin.isEmpty()) {
        skipped = "PostgreSQL row skipped: no binaries under /usr/lib/postgresql";
      } else {
        try {
          cluster = PostgresCluster.start(pgBin.get());
        } catch (Exception e) {
          skipped = "PostgreSQL row skipped: the throwaway cluster did not start (" + e.getMessage() + ")";
        }
      }
      try {
        List<Strategy> rows = new ArrayList<>(List.of(ServerRows.bare(base), ServerRows.guardInMemory(base),
            ServerRows.guardSqlite(base), ServerRows.guardFloor(base)));
        if (cluster != null) {
          rows.add(ServerRows.guardPostgres(base, cluster));
        }
        double[] ratios = group(md, "The guard over HTTP (POST /orders, a fresh key per request)", rows, work,
            slices, sliceMillis, warmupMillis);
        if (skipped != null) {
          md.append(skipped).append('\n');
          System.out.println(skipped);
        }
        md.append(String.format(Locale.ROOT, "%n| id | what | measured | goal | |%n|---|---|---|---|---|%n"));
        goal(md, "G1", "guard + SQLite store over HTTP, " + THREADS + " threads: requests/s ÷ bare handler", ratios[2],
            0.50);
        floor(md, "G1", ratios[2], ratios[3]);
      } finally {
        if (cluster != null) {
          cluster.close();
        }
      }
    }
    if (filter.isBlank() || filter.contains("webhook")) {
      double[] ratios = group(md, "Verified webhooks (Standard Webhooks, signed per request by the client)",
          List.of(ServerRows.webhookBare(base), ServerRows.webhookInbox(base), ServerRows.webhookFloor(base)), work,
          slices, sliceMillis, warmupMillis);
      md.append(String.format(Locale.ROOT, "%n| id | what | measured | goal | |%n|---|---|---|---|---|%n"));
      goal(md, "W1", "verified webhook accepts/s into the SQLite inbox ÷ bare 2xx handler, " + THREADS + " threads",
          ratios[1], 0.50);
      floor(md, "W1", ratios[1], ratios[2]);
    }
    return md.toString();
  }

  /** Measures one group (row 0 its baseline), appends its table, returns each row's ratio to row 0. */
  private static double[] group(StringBuilder md, String title, List<Strategy> rows, Path work, int slices,
      long sliceMillis, long warmupMillis) throws Exception {
    int n = rows.size();
    for (Strategy row : rows) {
      try (Strategy.Session session = row.open(Files.createTempDirectory(work, "server-warm-"))) {
        Load.run(session, THREADS, warmupMillis);
      }
    }
    double[][] rate = new double[n][slices];
    double[][] processCpu = new double[n][slices];
    double[][] cores = new double[n][slices];
    for (int s = 0; s < slices; s++) {
      StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "server slice %d:", s));
      for (int i = 0; i < n; i++) {
        int k = (i + s) % n;
        try (Strategy.Session session = rows.get(k).open(Files.createTempDirectory(work, "server-"))) {
          Load.Run run = Load.run(session, THREADS, sliceMillis);
          rate[k][s] = run.callsPerSecond();
          processCpu[k][s] = run.processCpuMicrosPerCall();
          cores[k][s] = run.coresBusy();
        }
      }
      for (int k = 0; k < n; k++) {
        line.append(String.format(Locale.ROOT, " [%d] %.0f/s", k, rate[k][s]));
      }
      System.out.println(line);
    }
    md.append(String.format(Locale.ROOT, "%s, %d client threads, %d server threads (CPU: the whole JVM's, client and"
        + " server, per request):%n%n| row | requests/s (× %s) | CPU µs per request | cores busy |%n"
        + "|---|---|---|---|%n", title, THREADS, ServerRows.SERVER_THREADS, rows.get(0).label()));
    double[] ratios = new double[n];
    for (int k = 0; k < n; k++) {
      double[] r = new double[slices];
      for (int s = 0; s < slices; s++) {
        r[s] = rate[k][s] / rate[0][s];
      }
      ratios[k] = Stats.median(r);
      md.append(String.format(Locale.ROOT, "| %s | %,.0f (%.2f) | %.1f | %.2f |%n", rows.get(k).label(),
          Stats.median(rate[k]), ratios[k], Stats.median(processCpu[k]), Stats.median(cores[k])));
    }
    return ratios;
  }

  /** What the floor row (one durable write, no Idem code) kept of the baseline, and Idem's share of that. */
  static void floor(StringBuilder md, String id, double idem, double floor) {
    floor(md, id, idem, floor, 0.50);
  }

  /** What a floor row (no Idem code) kept of the baseline against a goal of {@code goal}, and Idem's share of it. */
  static void floor(StringBuilder md, String id, double idem, double floor, double goal) {
    md.append(String.format(Locale.ROOT, "%s against its floor: the floor row kept %.2f of the baseline's rate, so the"
        + " goal's %.2f is %s it; Idem kept %.2f, which is %.2f of the floor's%n", id, floor, goal,
        floor < goal ? "above" : "at or below", idem, idem / floor));
  }

  private static void goal(StringBuilder md, String id, String what, double value, double atLeast) {
    md.append(String.format(Locale.ROOT, "| %s | %s | %.2f | ≥ %.2f | %s |%n", id, what, value, atLeast,
        value >= atLeast ? "met" : "NOT met"));
  }
}
