package dev.idem.examples.crashloop;

import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.Operation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.RetryPolicy;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * One incarnation of the app in {@link CrashLoopTest}: reopens the journal (which settles what the
 * previous, killed incarnation left in flight), resumes pending operations in the background, and
 * submits new ones until the parent kills it with SIGKILL. Each operation whose begin returned (it
 * is journaled, so the app may consider it accepted) is appended to the acknowledgement file, which
 * the kill cannot undo (it is in the OS's page cache; only the process dies).
 *
 * <p>Arguments: journal directory, server base URL, mode ({@code sync} or {@code outbox}), threads,
 * acknowledgement file, incarnation number.
 */
public final class CrashLoopChild {
  static final String OPERATION = "create-order";
  static final int MAX_PER_THREAD = 40;
  private static final MediaType JSON = MediaType.get("application/json");
  private static final RetryPolicy POLICY = RetryPolicy.builder().maxAttempts(4).baseDelay(Duration.ofMillis(20))
      .maxDelay(Duration.ofMillis(200)).deadline(Duration.ofSeconds(10)).build();

  private CrashLoopChild() {
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    URI base = URI.create(args[1]);
    boolean outboxMode = args[2].equals("outbox");
    int threads = Integer.parseInt(args[3]);
    Path ackFile = Path.of(args[4]);
    int incarnation = Integer.parseInt(args[5]);
    try (FileChannel acks = FileChannel.open(ackFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.APPEND);
        JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      IdempotentExecutor executor = executor(new AckingJournal(journal, acks), Duration.ofMillis(500));
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient client = client(idem);
      System.out.println("SUBMITTING");
      System.out.flush();
      Thread resumer = new Thread(() -> resumeForever(executor, idem, client), "resumer");
      resumer.setDaemon(true);
      resumer.start();
      if (outboxMode) {
        submitToOutbox(executor, idem, client, base, threads, incarnation);
      } else {
        submitInline(client, base, threads, incarnation);
      }
      System.out.println("FINISHED without being killed");
    }
  }

  static IdempotentExecutor executor(Journal journal, Duration lease) {
    return IdempotentExecutor.builder().journal(journal).retryPolicy(POLICY).leaseFor(lease).build();
  }

  static OkHttpClient client(IdemOkHttp idem) {
    return new OkHttpClient.Builder().addInterceptor(idem.interceptor()).retryOnConnectionFailure(false)
        .readTimeout(Duration.ofSeconds(5)).build();
  }

  static ResumeHandler handler(IdemOkHttp idem, OkHttpClient client) {
    return ResumeHandler.of(idem.transport(client), outcome -> { }, failure -> { });
  }

  private static void resumeForever(IdempotentExecutor executor, IdemOkHttp idem, OkHttpClient client) {
    Map<String, ResumeHandler> handlers = Map.of(OPERATION, handler(idem, client));
    while (true) {
      try {
        executor.resumePending(handlers);
        Thread.sleep(100);
      } catch (InterruptedException e) {
        return;
      } catch (IOException | RuntimeException e) {
        System.out.println("RESUME-ERROR " + e);
      }
    }
  }

  private static void submitInline(OkHttpClient client, URI base, int threads, int incarnation)
      throws InterruptedException {
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      Thread w = new Thread(() -> {
        for (int i = 0; i < MAX_PER_THREAD; i++) {
          Request request = new Request.Builder().url(base.resolve("/orders").toString())
              .post(RequestBody.create(body(incarnation, thread, i), JSON))
              .tag(IdempotentOperation.class, IdempotentOperation.of(OPERATION)).build();
          try (Response r = client.newCall(request).execute()) {
            r.body().string();
          } catch (IOException e) {
            // PENDING or UNCERTAIN: the journal has it; the resumer or a later incarnation settles it
          }
        }
      }, "submitter-" + t);
      w.start();
      workers.add(w);
    }
    for (Thread w : workers) {
      w.join();
    }
  }

  private static void submitToOutbox(IdempotentExecutor executor, IdemOkHttp idem, OkHttpClient client, URI base,
      int threads, int incarnation) throws Exception {
    try (OutboxDispatcher outbox = OutboxDispatcher.builder(executor).register(OPERATION, idem.transport(client))
        .build().start()) {
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        Thread w = new Thread(() -> {
          for (int i = 0; i < MAX_PER_THREAD; i++) {
            RequestSnapshot request = RequestSnapshot.builder("POST", base.resolve("/orders"))
                .body(body(incarnation, thread, i).getBytes(StandardCharsets.UTF_8), "application/json").build();
            try {
              outbox.submit(Operation.builder(OPERATION, request).key(IdempotencyKey.generate()).build());
            } catch (RuntimeException e) {
              System.out.println("SUBMIT-ERROR " + e);
            }
          }
        }, "submitter-" + t);
        w.start();
        workers.add(w);
      }
      for (Thread w : workers) {
        w.join();
      }
      outbox.shutdown(Duration.ofSeconds(10)).join();
    }
  }

  private static String body(int incarnation, int thread, int i) {
    return "{\"incarnation\":" + incarnation + ",\"thread\":" + thread + ",\"n\":" + i + "}";
  }

  /** Appends the key of every operation whose begin created it, once begin has returned. */
  private static final class AckingJournal extends ForwardingJournal {
    private final FileChannel acks;

    AckingJournal(Journal delegate, FileChannel acks) {
      super(delegate);
      this.acks = acks;
    }

    @Override
    public BeginResult begin(NewOperation operation) throws IdempotencyException {
      BeginResult r = super.begin(operation);
      if (r.created()) {
        byte[] line = (operation.id().key().value() + "\n").getBytes(StandardCharsets.US_ASCII);
        try {
          synchronized (acks) {
            acks.write(ByteBuffer.wrap(line));
          }
        } catch (IOException e) {
          throw new IllegalStateException("cannot write the acknowledgement file", e);
        }
      }
      return r;
    }
  }
}
