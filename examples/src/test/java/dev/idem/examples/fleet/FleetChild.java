package dev.idem.examples.fleet;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.RetryPolicy;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * One instance of the fleet in {@link FleetChaosTest}, wired as docs/fleet.md says: a connection
 * pool on the shared PostgreSQL journal, a stable owner name (the parent passes the "pod name"),
 * an outbox dispatcher with a transport for every operation name (so that what an inline call left
 * is delivered too), and no {@code resumePending}: the dispatcher alone takes back what an earlier
 * incarnation under the same name left.
 *
 * <p>It submits orders to the outbox and, every fourth one, makes an inline call, until the stop
 * file exists; then it only delivers, until the parent kills it. Each operation whose journal
 * begin returned (it is durable: the app may count it as accepted) is printed as {@code ACK <key>};
 * a SIGKILL cannot take back a line already written.
 *
 * <p>Arguments: PostgreSQL port, database, server base URL, owner name, lease in milliseconds,
 * stop file.
 */
public final class FleetChild {
  static final String ORDER = "create-order";
  static final String CHARGE = "charge";
  private static final MediaType JSON = MediaType.get("application/json");
  private static final RetryPolicy POLICY = RetryPolicy.builder().maxAttempts(4).baseDelay(Duration.ofMillis(50))
      .maxDelay(Duration.ofSeconds(1)).deadline(Duration.ofSeconds(10)).build();

  private FleetChild() {
  }

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    String database = args[1];
    URI base = URI.create(args[2]);
    String owner = args[3];
    Duration lease = Duration.ofMillis(Long.parseLong(args[4]));
    Path stop = Path.of(args[5]);

    HikariConfig pool = new HikariConfig();
    pool.setJdbcUrl("jdbc:postgresql://127.0.0.1:" + port + "/" + database);
    pool.setUsername("postgres");
    pool.setMaximumPoolSize(8);
    pool.setConnectionTimeout(2_000);  // fail a call fast while the database restarts
    pool.setInitializationFailTimeout(-1);  // start even if the database is down right now
    HikariDataSource dataSource = new HikariDataSource(pool);
    JdbcJournal journal = openWhenReachable(dataSource);
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(new Acking(journal)).owner(owner)
        .leaseFor(lease).retryPolicy(POLICY).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = new OkHttpClient.Builder().addInterceptor(idem.interceptor())
        .retryOnConnectionFailure(false).readTimeout(Duration.ofSeconds(5)).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(executor)
        .register(ORDER, idem.transport(client))
        .register(CHARGE, idem.transport(client))
        .maxInFlight(16).syncWorkers(16)
        .pollInterval(Duration.ofMillis(250)).maxPollInterval(Duration.ofSeconds(2))
        .build().start();
    System.out.println("READY " + System.currentTimeMillis());

    ThreadPoolExecutor inline = (ThreadPoolExecutor) Executors.newFixedThreadPool(2);
    for (long n = 0; !Files.exists(stop); n++) {
      String body = "{\"owner\":\"" + owner + "\",\"started\":" + ProcessHandle.current().pid() + ",\"n\":" + n + "}";
      if (n % 4 == 3) {
        if (inline.getQueue().size() < 4) {
          charge(inline, client, base, body);
        }
      } else {
        RequestSnapshot request = RequestSnapshot.builder("POST", base.resolve("/orders"))
            .body(body.getBytes(StandardCharsets.UTF_8), "application/json").build();
        try {
          outbox.submit(Operation.builder(ORDER, request).build());
        } catch (RuntimeException e) {
          System.out.println("SUBMIT-ERROR " + e);
        }
      }
      Thread.sleep(40);
    }
    System.out.println("STOPPED " + System.currentTimeMillis());
    inline.shutdown();
    Thread.sleep(Long.MAX_VALUE);  // delivering until the parent kills it
  }

  /** The journal, once the database answers (an instance may start while it restarts). */
  private static JdbcJournal openWhenReachable(HikariDataSource dataSource) throws InterruptedException {
    while (true) {
      try {
        return JdbcJournal.dataSource(dataSource).open();
      } catch (IdempotencyException | RuntimeException e) {
        System.out.println("OPEN-RETRY " + e);
        Thread.sleep(200);
      }
    }
  }

  private static void charge(ExecutorService inline, OkHttpClient client, URI base, String body) {
    Request request = new Request.Builder().url(base.resolve("/charges").toString())
        .post(RequestBody.create(body, JSON)).tag(IdempotentOperation.class, IdempotentOperation.of(CHARGE)).build();
    try {
      inline.execute(() -> {
        try (Response r = client.newCall(request).execute()) {
          r.body().string();
        } catch (IOException | RuntimeException e) {
          // PENDING or in flight: the journal has it, and the dispatcher delivers it
        }
      });
    } catch (RejectedExecutionException e) {
      // stopping
    }
  }

  /** Prints the key of every operation whose begin created it, once the begin has returned. */
  private static final class Acking extends ForwardingJournal {
    Acking(Journal delegate) {
      super(delegate);
    }

    @Override
    public BeginResult begin(NewOperation operation) throws IdempotencyException {
      BeginResult r = super.begin(operation);
      if (r.created()) {
        System.out.println("ACK " + operation.id().key().value());
      }
      return r;
    }
  }
}
