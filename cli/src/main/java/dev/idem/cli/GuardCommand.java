package dev.idem.cli;

import static dev.idem.cli.TerminalText.safe;

import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.RecordPage;
import dev.idem.server.RecordQuery;
import dev.idem.server.RecordState;
import dev.idem.server.RecordStats;
import dev.idem.server.RecordSummary;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The server guard's records in an embedded (SQLite) idempotency store, read-only
 * ({@link JdbcIdempotencyStore#openReadOnly}): beside the running service, nothing written. It
 * shows what {@link JdbcIdempotencyStore#records} and {@link JdbcIdempotencyStore#stats} return:
 * identity, state, times and stored status, never a stored header or body.
 */
@Command(name = "guard",
    description = "List and count the records of a server guard's idempotency store (read-only).",
    subcommands = {GuardCommand.ListRecords.class, GuardCommand.Stats.class})
final class GuardCommand {
  /** A command on one store, given by {@code --store}, opened read-only. */
  abstract static class StoreCommand extends CliCommand {
    @Option(names = "--store", required = true, paramLabel = "FILE",
        description = "Database file of an embedded guard store (JdbcIdempotencyStore.sqlite).")
    Path file;

    JdbcIdempotencyStore openReadOnly() {
      return JdbcIdempotencyStore.openReadOnly(requireLocation(spec, "--store", file));
    }
  }

  @Command(name = "list", description = "List records, oldest claim first: in one state, stuck ones, or all (read-only).")
  static final class ListRecords extends StoreCommand {
    @Option(names = "--state", description = "One of ${COMPLETION-CANDIDATES}, in any case (default: all states).")
    RecordState state;

    @Option(names = "--stuck", description = "Only in-flight records whose lease has expired: their holder died or stalled.")
    boolean stuck;

    @Option(names = "--older-than", paramLabel = "DURATION", defaultValue = "PT0S",
        description = "Only records claimed at least this long ago, as an ISO-8601 duration such as PT5M (default: any age).")
    Duration olderThan;

    @Option(names = "--limit", defaultValue = "100",
        description = "Print at most this many, 1 to " + RecordQuery.MAX_LIMIT + " (default: ${DEFAULT-VALUE}).")
    int limit;

    @Override
    public Integer call() {
      if (limit < 1 || limit > RecordQuery.MAX_LIMIT) {
        throw usage("--limit must be 1 to " + RecordQuery.MAX_LIMIT + ", not " + limit);
      }
      Instant now = Instant.now();
      olderThanCutoff(olderThan, now); // the store takes the age itself; checked here to be bad usage
      if (stuck && state != null && state != RecordState.IN_FLIGHT) {
        throw usage("--stuck lists in-flight records; it cannot go with --state " + state);
      }
      PrintWriter out = out();
      try (JdbcIdempotencyStore s = openReadOnly()) {
        RecordPage page = s.records(new RecordQuery(state, stuck, olderThan, limit), now);
        page.records().forEach(r -> line(out, r, now));
        // Named, so that the operator can find each row; as the journal's list does with a row it
        // cannot read, the rest are listed rather than the command failing.
        page.unreadable().forEach(id -> out.printf(Locale.ROOT,
            "%-9s %-16s %-24s %-40s (a state this Idem does not know)%n", "UNREADABLE", safe(id.caller()),
            safe(id.route()), safe(id.key())));
        if (!page.unreadable().isEmpty()) {
          out.println(page.unreadable().size() + " record(s) cannot be read (a state this Idem does not know: a newer"
              + " Idem's, or a hand edit) and are not counted below");
        }
        String what = (stuck ? "stuck " : "") + (state != null ? state + " " : "") + "record(s)";
        out.println(page.more() ? page.records().size() + " " + what + " shown; more exist: raise --limit or narrow"
            + " with --state, --stuck or --older-than" : page.records().size() + " " + what);
      }
      return 0;
    }

    private static void line(PrintWriter out, RecordSummary r, Instant now) {
      String result = r.status().isPresent() ? " status=" + r.status().getAsInt() : "";
      String lease = r.state() == RecordState.IN_FLIGHT
          ? (r.stuck(now) ? " STUCK lease-ended=" : " lease-until=") + r.leaseUntil() : "";
      // Caller, route and key are what the service's clients sent: escaped.
      out.printf(Locale.ROOT, "%-9s %-16s %-24s %-40s gen=%d holder=%s age=%s%s%s%s expires=%s%n", r.state(),
          safe(r.id().caller()), safe(r.id().route()), safe(r.id().key()), r.generation(), safe(r.holder()), r.age(now),
          r.tookOver() ? " took-over" : "",
          result, lease, r.expiresAt());
    }
  }

  @Command(name = "stats", description = "Count records per state and stuck ones; the oldest in-flight claim, the oldest"
      + " unexpired key and the purge lag (read-only).")
  static final class Stats extends StoreCommand {
    @Override
    public Integer call() {
      PrintWriter out = out();
      Instant now = Instant.now();
      try (JdbcIdempotencyStore s = openReadOnly()) {
        RecordStats st = s.stats(now);
        out.printf(Locale.ROOT, "%-9s %d%n", RecordState.IN_FLIGHT, st.inFlight());
        out.printf(Locale.ROOT, "%-9s %d%n", RecordState.COMPLETED, st.completed());
        out.printf(Locale.ROOT, "%-9s %d%n", RecordState.RELEASED, st.released());
        out.printf(Locale.ROOT, "%-9s %d%n", "STUCK", st.stuck());
        if (st.unreadable() > 0) {
          out.println(st.unreadable() + " record(s) cannot be read (a state this Idem does not know: a newer Idem's,"
              + " or a hand edit) and are not counted above; guard list names them");
        }
        out.println("oldest in flight: " + st.oldestInFlight().map(t -> t + " (" + seconds(st.oldestInFlightAge(now))
            + " ago)").orElse("none"));
        // How far back keys are honoured (near the retention when the purge works) and how far the
        // purge is behind: the two numbers that say whether retention works.
        out.println("oldest unexpired key: " + st.oldestUnexpired().map(t -> "claimed " + t + " ("
            + seconds(st.oldestUnexpiredAge(now)) + " ago)").orElse("none"));
        out.println("purge lag: " + st.oldestPurgeable().map(t -> seconds(st.purgeLag(now))
            + " (the oldest record past retention expired " + t + ")").orElse("none (no record past retention)"));
      }
      return 0;
    }

    private static Duration seconds(Duration d) {
      return d.truncatedTo(ChronoUnit.SECONDS);
    }
  }
}
