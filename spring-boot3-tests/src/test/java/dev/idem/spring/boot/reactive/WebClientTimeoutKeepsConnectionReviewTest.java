package dev.idem.spring.boot.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.net.httpserver.HttpServer;
import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.adapter.AttemptBound;
import dev.idem.core.testing.VirtualTime;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.client.IdempotentCall;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * docs/spring.md's own WebClient snippet bounds a keyed call with {@code .timeout(Duration.ofSeconds(5))}
 * before its {@code retryWhen}. Without Idem, that timeout's cancel closes the exchange's connection.
 * With Idem's filter, the cancel leaves "an attempt already on the wire [to run] to its end", and
 * with no {@code idem.client.attempt-timeout} (the default) nothing ever ends an attempt to a
 * target that accepted the request and never answers: the connection stays taken for good (and
 * the operation's flight with it, so every later call for the same operation in this process
 * waits on it). Each such timeout leaks one connection of the host's pool; once they are all
 * taken, every request to that host, keyed or not, waits for a connection and fails. The outbox
 * got a 30 s default bound for exactly this target (docs/spring.md, "Every delivery attempt of the
 * outbox is bounded, never unbounded"); a cancelled inline call has none.
 *
 * <p>Here the host's pool has one connection (as a pool of any size has after as many timeouts).
 * The control: a plain WebClient on the same pool frees the connection when the caller cancels,
 * and a GET then gets through. Expected: the same with Boot's (keyed) WebClient.Builder, once the
 * abandoned attempt's bound ({@link AttemptBound}, 30 s here; fake time) has passed: the exchange is
 * then cancelled and the attempt recorded as ambiguous.
 */
class WebClientTimeoutKeepsConnectionReviewTest {
  private HttpServer server;
  private ExecutorService handlers;
  private final CountDownLatch release = new CountDownLatch(1);
  private final java.util.concurrent.LinkedBlockingQueue<String> posted = new java.util.concurrent.LinkedBlockingQueue<>();

  @BeforeEach
  void start() throws Exception {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    handlers = Executors.newCachedThreadPool();
    server.setExecutor(handlers);
    server.createContext("/orders", exchange -> {
      exchange.getRequestBody().readAllBytes();
      posted.add(String.valueOf(exchange.getRequestHeaders().getFirst("Idempotency-Key")));
      try {
        release.await(60, TimeUnit.SECONDS); // a target that took the request and never answers
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      exchange.close();
    });
    server.createContext("/ping", exchange -> {
      byte[] pong = "pong".getBytes(StandardCharsets.US_ASCII);
      exchange.sendResponseHeaders(200, pong.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(pong);
      }
    });
    server.start();
  }

  @AfterEach
  void stop() {
    release.countDown();
    server.stop(0);
    handlers.shutdownNow();
  }

  private String url(String path) {
    return "http://127.0.0.1:" + server.getAddress().getPort() + path;
  }

  private static ReactorClientHttpConnector onePerHost(String name) {
    return new ReactorClientHttpConnector(HttpClient.create(ConnectionProvider.builder(name).maxConnections(1)
        .pendingAcquireTimeout(Duration.ofSeconds(5)).build()));
  }

  /** Sends the POST, waits until the target has it, then cancels, as timeout(...) does. */
  private void postThenTimeOut(WebClient client, Object call) throws Exception {
    Disposable subscription = client.post().uri(url("/orders")).contentType(MediaType.APPLICATION_JSON)
        .attributes(a -> {
          if (call != null) {
            a.put(IdempotentCall.ATTRIBUTE, call);
          }
        })
        .bodyValue("{\"qty\":1}").retrieve().bodyToMono(String.class).subscribe(v -> { }, e -> { });
    if (posted.poll(20, TimeUnit.SECONDS) == null) {
      throw new AssertionError("the POST never reached the target");
    }
    subscription.dispose(); // .timeout(Duration.ofSeconds(5)) fired
  }

  private static String ping(WebClient client, String url) {
    try {
      return client.get().uri(url).retrieve().bodyToMono(String.class).block(Duration.ofSeconds(30));
    } catch (RuntimeException e) {
      return "failed: " + e;
    }
  }

  @Test
  void aKeyedCallCancelledByTimeoutFreesItsConnection(@TempDir Path dir) throws Exception {
    // Control: without Idem, the cancel closes the connection and the next request gets one.
    WebClient plain = WebClient.builder().clientConnector(onePerHost("plain")).build();
    postThenTimeOut(plain, null);
    assertEquals("pong", ping(plain, url("/ping")), "control: a plain WebClient's cancel frees the connection");

    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false")
        .withBean(WebClient.Builder.class, WebClient::builder)
        // The executor's scheduler times the bound of an abandoned attempt (AttemptBound: 30 s
        // when nothing else is given): fake time, so that it passes at once.
        .withBean(VirtualTime.class, VirtualTime::new)
        .withUserConfiguration(FakeTimeExecutor.class)
        .run(context -> {
          VirtualTime time = context.getBean(VirtualTime.class);
          IdempotentExecutor executor = context.getBean(IdempotentExecutor.class);
          WebClient keyed = context.getBean(WebClient.Builder.class).clientConnector(onePerHost("keyed")).build();
          int boundsBefore = java.util.Collections.frequency(time.scheduledDelays(), AttemptBound.DEFAULT);
          postThenTimeOut(keyed, IdempotentCall.named("create-order"));
          awaitBoundScheduled(time, boundsBefore);
          time.advance(AttemptBound.DEFAULT);
          assertEquals("pong", ping(keyed, url("/ping")),
              "the keyed POST's connection is still taken after its caller's timeout() cancelled it,"
                  + " and the next request to the host cannot get one");
          // The attempt is recorded as ambiguous (it reached the target), and the operation, whose
          // caller went away, stays PENDING with its key: its single flight is free again.
          OperationRecord record = awaitRecorded(executor);
          assertEquals(1, record.attempts().size(), record.toString());
          assertEquals(Classification.AMBIGUOUS, record.attempts().get(0).classification(), record.toString());
        });
  }

  /**
   * The abandoned attempt's bound is armed by whichever of the cancel and the send comes last, and
   * the send may set its attempt on the wire on a Reactor thread after the target already has the
   * request: advancing the clock before the timer is armed would leave it 30 s in the future.
   */
  private static void awaitBoundScheduled(VirtualTime time, int before) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (java.util.Collections.frequency(time.scheduledDelays(), AttemptBound.DEFAULT) <= before) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the abandoned attempt's bound was never armed: " + time.scheduledDelays());
      }
      Thread.sleep(10); // waits on the send's Reactor thread, not on time: fake time drives the bound
    }
  }

  /** The PENDING operation once its attempt is recorded (on the executor's pool), within 20 s. */
  private static OperationRecord awaitRecorded(IdempotentExecutor executor) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      List<OperationRecord> pending = executor.journal().findByState(OperationState.PENDING, null, 10);
      if (pending.size() == 1 && !pending.get(0).attempts().isEmpty()) {
        return pending.get(0);
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the abandoned attempt was not recorded: " + pending);
      }
      Thread.sleep(10); // waits on the executor's pool, not on time: fake time drives the bound
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class FakeTimeExecutor {
    @Bean(destroyMethod = "close")
    IdempotentExecutor idemExecutor(VirtualTime time) {
      return IdempotentExecutor.builder().journal(new InMemoryJournal()).scheduler(time.scheduler()).build();
    }
  }
}
