package dev.idem.cli;

import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.RecordId;
import dev.idem.server.RecordState;
import dev.idem.server.StoredRecord;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The server guard's records in an embedded (SQLite) idempotency store, read-only
 * ({@link JdbcIdempotencyStore#openReadOnly}): beside the running service, nothing written. A
 * record's stored headers and body are never printed, only its status and body size.
 */
@Command(name = "guard",
    description = "List and count the records of a server guard's idempotency store (read-only).",
    subcommands = {GuardCommand.ListRecords.class, GuardCommand.Stats.class})
final class GuardCommand {
  /** Records fetched per query: bounded memory whatever --limit says. */
  static final int PAGE = 500;

  /** Where the store is; shared by the subcommands. */
  static final class StoreOptions {
    @Option(names = "--store", required = true, paramLabel = "FILE",
        description = "Database file of an embedded guard store (JdbcIdempotencyStore.sqlite).")
    Path file;
  }

  @Command(name = "list", description = "List records in key order, in one state or all (read-only).")
  static final class ListRecords implements Callable<Integer> {
    @Mixin
    StoreOptions store = new StoreOptions();

    @Option(names = "--state", description = "One of ${COMPLETION-CANDIDATES}, in any case (default: all states).")
    RecordState state;

    @Option(names = "--limit", defaultValue = "100", description = "Print at most this many, at least 1 (default: ${DEFAULT-VALUE}).")
    int limit;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      if (limit < 1) {
        throw new ParameterException(spec.commandLine(), "--limit must be at least 1, not " + limit);
      }
      PrintWriter out = spec.commandLine().getOut();
      try (JdbcIdempotencyStore s = JdbcIdempotencyStore.openReadOnly(store.file)) {
        int printed = 0;
        RecordId after = null;
        while (printed < limit) {
          List<StoredRecord> page = s.list(state, after, Math.min(PAGE, limit - printed));
          page.forEach(r -> line(out, r));
          printed += page.size();
          if (page.isEmpty()) {
            break;
          }
          after = page.get(page.size() - 1).id();
        }
        Map<RecordState, Long> counts = s.counts();
        long total = state != null ? counts.get(state) : counts.values().stream().mapToLong(Long::longValue).sum();
        String what = state != null ? state + " record(s)" : "record(s)";
        out.println(printed == total ? total + " " + what
            : printed + " of " + total + " " + what + " shown; raise --limit to see more");
      }
      return 0;
    }

    private static void line(PrintWriter out, StoredRecord r) {
      String result = r.response().map(resp -> " status=" + resp.status() + " body=" + resp.body().length + " bytes"
          + (resp.bodyOmitted() ? " (not stored: over the cap)" : "")).orElse("");
      String lease = r.state() == RecordState.IN_FLIGHT ? " lease-until=" + r.leaseUntil() : "";
      out.printf("%-9s %-16s %-24s %-40s gen=%d%s%s expires=%s%n", r.state(), r.id().caller(), r.id().route(),
          r.id().key(), r.generation(), result, lease, r.expiresAt());
    }
  }

  @Command(name = "stats", description = "Count records per state (read-only).")
  static final class Stats implements Callable<Integer> {
    @Mixin
    StoreOptions store = new StoreOptions();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      try (JdbcIdempotencyStore s = JdbcIdempotencyStore.openReadOnly(store.file)) {
        s.counts().forEach((state, n) -> out.printf("%-9s %d%n", state, n));
      }
      return 0;
    }
  }
}
