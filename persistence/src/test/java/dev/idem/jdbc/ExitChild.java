package dev.idem.jdbc;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Jitter;
import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The child JVM of {@link JournalExitTest}: an app on the embedded journal that ends in one of the
 * ordinary ways, or is killed at one chosen point. Its journal defers commits for an hour, so that
 * nothing deferred is durable unless a durable write carries it or the journal is closed: what the
 * parent finds is what the journal made durable on purpose, never what a timer happened to flush.
 *
 * <p>Arguments: journal directory, server log, mode, count. The "server" appends every key it
 * receives to the server log (the effect count per key). Each outcome a caller or handler was
 * given is printed as {@code TOLD <key> <STATE>} (callers) or {@code CONFIRMED <key> <fromJournal>}
 * (a resume handler). Modes:
 * <ul>
 *   <li>{@code return}, {@code exit}, {@code sigterm}: {@code count} inline calls that SUCCEED, and
 *       two to a target with nothing listening that end FAILED; then {@code main} returns without
 *       closing anything, or calls {@code System.exit(0)}, or prints {@code READY} and waits for
 *       the parent's SIGTERM;</li>
 *   <li>{@code busy-exit}: four threads keep calling while the main thread calls
 *       {@code System.exit(0)} after {@code count} successes; each thread stops at its first
 *       failure, printed as {@code ERR <key> <exception class>};</li>
 *   <li>{@code failed-then-halt}, {@code uncertain-then-halt}: one call ends FAILED (target down)
 *       or UNCERTAIN (every attempt times out), then {@link Runtime#halt} (no hook runs);</li>
 *   <li>{@code enqueue-halt}: enqueues {@code count} operations (queued, never sent), then halts;</li>
 *   <li>{@code halt-in-handler}: enqueues {@code count} operations and resumes them through a
 *       handler that confirms each; at operation {@code count / 2} the handler makes the journal
 *       durable and halts before it confirms, as a crash between the terminal write and the
 *       callback would.</li>
 * </ul>
 */
public final class ExitChild {
  /** So long that a deferred write is durable only because something made it so. */
  static final Duration DEFER = Duration.ofHours(1);
  static final String OPERATION = "charge";

  private ExitChild() {
  }

  static RetryPolicy policy() {
    return RetryPolicy.builder().maxAttempts(2).baseDelay(Duration.ofMillis(1)).maxDelay(Duration.ofMillis(5))
        .jitter(Jitter.NONE).build();
  }

  static IdempotentExecutor executor(dev.idem.core.spi.Journal journal, String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).retryPolicy(policy())
        .circuitBreaker(CircuitBreakerSettings.disabled()).build();
  }

  /** The "server": records each request's key in the log, as its effect, and answers 201. */
  static final class Server implements Transport, AutoCloseable {
    private final FileChannel log;

    Server(Path serverLog) throws IOException {
      this.log = FileChannel.open(serverLog, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.APPEND);
    }

    @Override
    public ResponseSnapshot send(dev.idem.core.spi.RequestSnapshot request, IdempotencyKey key) throws IOException {
      synchronized (log) {
        log.write(ByteBuffer.wrap((key.value() + "\n").getBytes(StandardCharsets.US_ASCII)));
      }
      return new ResponseSnapshot(201, Map.of("content-type", List.of("application/json")),
          ("{\"ok\":\"" + key.value() + "\"}").getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() throws IOException {
      log.close();
    }
  }

  static Operation op(IdempotencyKey key, int i) {
    return Operation.builder(OPERATION, KillChild.request(i)).key(key).build();
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    Server server = new Server(Path.of(args[1]));
    String mode = args[2];
    int count = Integer.parseInt(args[3]);
    JdbcJournal journal = JdbcJournal.embedded(dir).deferredCommitInterval(DEFER).open();
    IdempotentExecutor executor = executor(journal, "child");
    List<IdempotencyKey> keys = KillChild.keys(count + 2);
    switch (mode) {
      case "return", "exit", "sigterm" -> {
        for (int i = 0; i < count; i++) {
          int n = i;
          told(keys.get(n), () -> executor.execute(op(keys.get(n), n), server).response().status());
        }
        Transport down = (request, key) -> {
          throw new ConnectException("Connection refused");
        };
        for (int i = count; i < count + 2; i++) {
          int n = i;
          told(keys.get(n), () -> executor.execute(op(keys.get(n), n), down).response().status());
        }
        if (mode.equals("exit")) {
          System.exit(0);
        }
        if (mode.equals("sigterm")) {
          System.out.println("READY");
          Thread.sleep(Long.MAX_VALUE);
        }
        // "return": main ends here, with the journal open
      }
      case "busy-exit" -> busyExit(executor, server, count);
      case "failed-then-halt", "uncertain-then-halt" -> {
        Transport down = (request, key) -> {
          throw new ConnectException("Connection refused");
        };
        Transport silent = (request, key) -> {
          throw new SocketTimeoutException("read timed out");
        };
        Transport target = mode.startsWith("failed") ? down : silent;
        told(keys.get(0), () -> executor.execute(op(keys.get(0), 0), target).response().status());
        Runtime.getRuntime().halt(HaltingJournal.HALT_CODE);
      }
      case "enqueue-halt" -> {
        for (int i = 0; i < count; i++) {
          executor.enqueue(op(keys.get(i), i));
        }
        System.out.println("ENQUEUED " + count);
        Runtime.getRuntime().halt(HaltingJournal.HALT_CODE);
      }
      case "halt-in-handler" -> {
        for (int i = 0; i < count; i++) {
          executor.enqueue(op(keys.get(i), i));
        }
        IdempotencyKey haltAt = keys.get(count / 2);
        executor.resumePending(Map.of(OPERATION, ResumeHandler.of(server, outcome -> {
          if (outcome.key().equals(haltAt)) {
            try {
              journal.flush();  // the SUCCEEDED write is durable; the record of this callback is not
            } catch (IdempotencyException e) {
              throw new IllegalStateException(e);
            }
            Runtime.getRuntime().halt(HaltingJournal.HALT_CODE);
          }
          System.out.println("CONFIRMED " + outcome.key() + " " + outcome.fromJournal());
        }, failure -> System.out.println("NOT-CONFIRMED " + failure.key() + " " + failure.state()))));
        System.out.println("finished without halting");
        System.exit(1);
      }
      default -> throw new IllegalArgumentException(mode);
    }
  }

  private interface Call {
    int run() throws IdempotencyException;
  }

  /** Runs one call and prints what its caller was told. */
  private static void told(IdempotencyKey key, Call call) {
    try {
      call.run();
      System.out.println("TOLD " + key + " SUCCEEDED");
    } catch (OperationException e) {
      System.out.println("TOLD " + key + " " + e.state());
    } catch (IdempotencyException | RuntimeException e) {
      System.out.println("ERR " + key + " " + e.getClass().getName() + " " + e.getMessage());
    }
  }

  private static void busyExit(IdempotentExecutor executor, Server server, int count) throws InterruptedException {
    CountDownLatch enough = new CountDownLatch(count);
    AtomicInteger next = new AtomicInteger();
    List<Thread> workers = new ArrayList<>();
    java.util.Random random = new java.util.Random();
    for (int t = 0; t < 4; t++) {
      Thread w = new Thread(() -> {
        while (true) {
          int i = next.getAndIncrement();
          IdempotencyKey key;
          synchronized (random) {
            key = IdempotencyKey.generate(random);
          }
          try {
            executor.execute(op(key, i), server);
            System.out.println("TOLD " + key + " SUCCEEDED");
            enough.countDown();
          } catch (IdempotencyException | RuntimeException e) {
            System.out.println("ERR " + key + " " + e.getClass().getName() + " " + e.getMessage());
            return;
          }
        }
      }, "caller-" + t);
      w.start();
      workers.add(w);
    }
    enough.await();
    System.exit(0);
  }
}
