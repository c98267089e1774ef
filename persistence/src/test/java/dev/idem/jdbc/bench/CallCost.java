package dev.idem.jdbc.bench;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.internal.RecordCodec;
import dev.idem.jdbc.internal.RequestCheck;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The calling thread's CPU and allocated bytes per durable call's journal work, counted with
 * {@code ThreadMXBean} (issue 28): the codec alone, then the journal's two writes on an embedded
 * (SQLite) journal, begin and claim (the sync commit) and the attempt with its outcome (deferred).
 * A program, not a test: {@code java -cp <persistence test class path> dev.idem.jdbc.bench.CallCost}.
 * Prints medians of {@code rounds} rounds.
 */
public final class CallCost {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
  static final RequestSnapshot REQUEST = RequestSnapshot.builder("POST",
      URI.create("http://127.0.0.1:8080/v1/orders")).header("Content-Type", "application/json")
      .header("Accept", "application/json").header("User-Agent", "okhttp/4.12.0")
      .body("{\"amount\":1999,\"currency\":\"EUR\",\"customer\":\"cus_123\"}".getBytes(StandardCharsets.UTF_8),
          "application/json")
      .build();
  static final ResponseSnapshot RESPONSE = new ResponseSnapshot(201,
      Map.of("Content-Type", List.of("application/json"), "Content-Length", List.of("14"),
          "Date", List.of("Wed, 02 Dec 2026 07:00:00 GMT")),
      "{\"id\":\"ord_1\"}".getBytes(StandardCharsets.UTF_8));

  private CallCost() {
  }

  public static void main(String[] args) throws Exception {
    int rounds = Integer.getInteger("rounds", 7);
    int calls = Integer.getInteger("calls", 2000);
    RecordCodec codec = new RecordCodec(1 << 20, "x-truncated");
    AttemptRecord attempt = new AttemptRecord(1, 1, Instant.now(), Instant.now(), Classification.SUCCESS, 201, null,
        "HTTP 201", Duration.ZERO, "success");
    var fingerprint = Fingerprinter.defaults().fingerprint(REQUEST);
    String fp = fingerprint.hex();
    measure("codec (request, check, response, attempt)", rounds, calls * 10, () -> {
      String json = codec.encodeRequest(REQUEST);
      RequestCheck.of(fp, json);
      codec.encodeResponse(RESPONSE, Set.of());
      codec.encodeAttempt(attempt);
    });
    if (Boolean.getBoolean("split")) {
      String json = codec.encodeRequest(REQUEST);
      measure("  encodeRequest", rounds, calls * 10, () -> codec.encodeRequest(REQUEST));
      measure("  RequestCheck.of", rounds, calls * 10, () -> RequestCheck.of(fp, json));
      measure("  encodeResponse", rounds, calls * 10, () -> codec.encodeResponse(RESPONSE, Set.of()));
      measure("  encodeAttempt", rounds, calls * 10, () -> codec.encodeAttempt(attempt));
    }
    Path dir = Files.createTempDirectory("callcost");
    Random random = new Random(1);
    try (JdbcJournal journal = JdbcJournal.embedded(dir).open()) {
      long[][] beginCpu = new long[rounds][];
      measure("journal begin+claim, then attempt+transition", rounds, calls, () -> {
        OperationId id = new OperationId("s", "charge", IdempotencyKey.generate(random));
        Instant now = Instant.now();
        NewOperation op = new NewOperation(id, null, fingerprint, REQUEST, now);
        BeginResult b = journal.beginAndClaim(op, "owner-1", Duration.ofSeconds(30));
        journal.recordAttemptAndTransition(id, b.lease(),
            new AttemptRecord(1, 1, now, now, Classification.SUCCESS, 201, null, "HTTP 201", Duration.ZERO,
                "success"),
            Transition.finish(OperationState.SUCCEEDED, now, RESPONSE, "HTTP 201"));
      });
      // The second write alone: begins untimed, then the attempts and transitions timed.
      long[] cpu = new long[rounds];
      long[] alloc = new long[rounds];
      for (int r = 0; r < rounds + 2; r++) {
        OperationId[] ids = new OperationId[calls];
        dev.idem.core.spi.Lease[] leases = new dev.idem.core.spi.Lease[calls];
        Instant now = Instant.now();
        for (int i = 0; i < calls; i++) {
          ids[i] = new OperationId("s", "charge", IdempotencyKey.generate(random));
          leases[i] = journal.beginAndClaim(new NewOperation(ids[i], null,
              fingerprint, REQUEST, now), "owner-1", Duration.ofSeconds(30))
              .lease();
        }
        long c0 = THREADS.getCurrentThreadCpuTime();
        long a0 = THREADS.getThreadAllocatedBytes(Thread.currentThread().getId());
        for (int i = 0; i < calls; i++) {
          journal.recordAttemptAndTransition(ids[i], leases[i],
              new AttemptRecord(1, 1, now, now, Classification.SUCCESS, 201, null, "HTTP 201", Duration.ZERO,
                  "success"),
              Transition.finish(OperationState.SUCCEEDED, now, RESPONSE, "HTTP 201"));
        }
        if (r >= 2) {
          cpu[r - 2] = (THREADS.getCurrentThreadCpuTime() - c0) / calls;
          alloc[r - 2] = (THREADS.getThreadAllocatedBytes(Thread.currentThread().getId()) - a0) / calls;
        }
      }
      print("journal attempt+transition alone", cpu, alloc);
    }
  }

  private interface Call {
    void run() throws Exception;
  }

  private static void measure(String what, int rounds, int calls, Call call) throws Exception {
    long[] cpu = new long[rounds];
    long[] alloc = new long[rounds];
    for (int r = 0; r < rounds + 2; r++) { // two rounds of warm-up
      long c0 = THREADS.getCurrentThreadCpuTime();
      long a0 = THREADS.getThreadAllocatedBytes(Thread.currentThread().getId());
      for (int i = 0; i < calls; i++) {
        call.run();
      }
      if (r >= 2) {
        cpu[r - 2] = (THREADS.getCurrentThreadCpuTime() - c0) / calls;
        alloc[r - 2] = (THREADS.getThreadAllocatedBytes(Thread.currentThread().getId()) - a0) / calls;
      }
    }
    print(what, cpu, alloc);
  }

  private static void print(String what, long[] cpu, long[] alloc) {
    Arrays.sort(cpu);
    Arrays.sort(alloc);
    System.out.printf("%-50s cpu %6.1f us/call (min %6.1f)  alloc %7d B/call%n", what, cpu[cpu.length / 2] / 1e3,
        cpu[0] / 1e3, alloc[alloc.length / 2]);
  }
}
