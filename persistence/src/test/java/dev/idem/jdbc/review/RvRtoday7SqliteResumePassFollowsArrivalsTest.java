package dev.idem.jdbc.review;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JDBC journal's side of RvRtoday7ResumePassFollowsArrivalsTest (sdk-core): a resume pass over
 * a SQLite journal does not end while operations keep being begun (e02f249a, dc952daa).
 *
 * <p>A pass now ends only at an empty page. A row begun after the pass took its instant is PENDING
 * with {@code next_attempt_at} NULL, which {@code OperationTable.DUE_NOW} counts as due at that
 * instant, and its {@code DUE_AT} (its {@code updated_at}, later than every row read so far) sorts
 * after the pass's (due_at, id) cursor: every page read finds what was begun while the previous
 * page was resumed. Before e02f249a the pass ended at its first page shorter than 100. Under steady
 * traffic a startup {@code resumePending} never returns (a close() waits its whole grace for it). Here one
 * operation is begun after each page read, 200 in all; the pass started with 3 due.
 */
class RvRtoday7SqliteResumePassFollowsArrivalsTest {
  private static final int ARRIVALS = 200;

  @TempDir
  Path tmp;

  private final VirtualTime time = new VirtualTime(T0);

  /** An operation begun now (its created_at is the clock's), as the executor begins one. */
  private NewOperation begunNow(Ops ops, int n) {
    RequestSnapshot r = Ops.request("{\"n\":" + n + "}");
    return new NewOperation(ops.id("create-order"), null, Fingerprinter.defaults().fingerprint(r), r, time.now());
  }

  @Test
  void aPassEndsWhileTheAppKeepsBeginningOperations() throws Exception {
    Ops ops = new Ops(7);
    AtomicInteger begun = new AtomicInteger();
    AtomicInteger reads = new AtomicInteger();
    try (JdbcJournal j = JdbcJournal.embedded(tmp.resolve("journal")).closeOnShutdown(false).clock(time.clock())
        .open()) {
      for (int i = 0; i < 3; i++) {
        j.begin(begunNow(ops, i));
        time.advance(Duration.ofSeconds(1));
      }
      ForwardingJournal arrivals = new ForwardingJournal(j) {
        @Override
        public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
            throws IdempotencyException {
          List<OperationRecord> page = super.findDue(now, owner, after, limit);
          reads.incrementAndGet();
          if (begun.get() < ARRIVALS) {
            time.advance(Duration.ofSeconds(1));
            j.begin(begunNow(ops, 1000 + begun.getAndIncrement()));
          }
          return page;
        }
      };
      List<IdempotencyKey> sent = new CopyOnWriteArrayList<>();
      Transport server = (request, key) -> {
        sent.add(key);
        return Ops.ok("{\"id\":1}");
      };
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(arrivals).owner("app").clock(time.clock())
          .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).build();

      ResumeSummary summary = executor.resumePending(Map.of("create-order", ResumeHandler.of(server, o -> { }, f -> { })));

      assertTrue(begun.get() < ARRIVALS, "the pass read on until the app stopped beginning operations (" + reads.get()
          + " page reads, " + sent.size() + " sent): under steady traffic it never ends; " + summary);
      assertEquals(3, summary.examined(), "the operations due when the pass started: " + summary);
    }
  }
}
