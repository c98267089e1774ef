package dev.idem.examples.demo;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.spi.Journal;
import dev.idem.core.RetryPolicy;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;

/**
 * What the scenarios share: the reference server on loopback, a scratch directory for journals,
 * and a way to build the client an app would have (OkHttp with Idem's interceptor and an auth
 * interceptor that adds a secret the journal must never see).
 */
final class DemoEnvironment implements AutoCloseable {
  static final MediaType JSON = MediaType.get("application/json");
  static final String SECRET = "Bearer demo-secret-token";

  /** Short delays so that the demo runs in seconds; the defaults are longer. */
  static final RetryPolicy POLICY = RetryPolicy.builder()
      .maxAttempts(5)
      .baseDelay(Duration.ofMillis(50))
      .maxDelay(Duration.ofMillis(500))
      .deadline(Duration.ofSeconds(20))
      .build();

  final IdempotentServer server;
  final Path workDir;

  /** True if the journals stay after the run (--keep), for the CLI to inspect. */
  final boolean keep;

  DemoEnvironment() throws IOException {
    this(null);
  }

  /**
   * @param keepDir where to leave the journals (created if absent, refused if not empty), or null
   *     for a temporary directory deleted after a run whose invariants all held
   */
  DemoEnvironment(Path keepDir) throws IOException {
    if (keepDir != null) {
      if (Files.isDirectory(keepDir)) {
        try (var entries = Files.list(keepDir)) {
          if (entries.findAny().isPresent()) {
            // Old journals would be resumed by the crash scenario and mixed into the counts.
            throw new IllegalArgumentException("--keep " + keepDir + " is not empty; give a new or empty directory");
          }
        }
      }
      this.workDir = Files.createDirectories(keepDir).toAbsolutePath();
    } else {
      this.workDir = Files.createTempDirectory("idem-demo-");
    }
    this.keep = keepDir != null;
    this.server = IdempotentServer.start();
  }

  /** Server-side effects for all of {@code keys}. */
  long effectsFor(java.util.List<String> keys) {
    return keys.stream().mapToLong(server::effectCount).sum();
  }

  /** The URL the naive clients post to, apart from Idem's /orders so that the key checks stay exact. */
  String naiveUrl(String path) {
    return server.url("/naive" + path).toString();
  }

  /** A fresh durable journal in its own directory. */
  JdbcJournal newJournal(String name) throws IOException {
    return JdbcJournal.openEmbedded(workDir.resolve(name));
  }

  /** An executor over {@code journal} with the demo's policy. */
  static IdempotentExecutor executor(Journal journal) {
    return IdempotentExecutor.builder().journal(journal).retryPolicy(POLICY).build();
  }

  /**
   * The app's client: Idem's interceptor first, then the app's own interceptor that adds
   * Authorization on every attempt (and after a restart). OkHttp's silent connection retry is off
   * so that every attempt in the table is one Idem made.
   */
  static OkHttpClient client(IdemOkHttp idem) {
    return new OkHttpClient.Builder()
        .addInterceptor(idem.interceptor())
        .addInterceptor(chain -> chain.proceed(chain.request().newBuilder().header("Authorization", SECRET).build()))
        .retryOnConnectionFailure(false)
        .readTimeout(Duration.ofSeconds(5))
        .build();
  }

  static Request.Builder post(IdempotentServer server, String path, String json) {
    return new Request.Builder().url(server.url(path).toString()).post(RequestBody.create(json, JSON));
  }

  /** Requests the server received carrying {@code key}. */
  long requestsWithKey(String key) {
    return server.recordedRequests().stream()
        .filter(r -> r.keyHeader().map(k -> k.equals(key)).orElse(false))
        .count();
  }

  /** True if every keyed request the server saw for this path carried {@code key}. */
  boolean onlyKeySeenOn(String path, String key) {
    return server.recordedRequests().stream()
        .filter(r -> r.path().equals(path))
        .map(ReceivedRequest::keyHeader)
        .allMatch(k -> k.isPresent() && k.get().equals(key));
  }

  /** Deletes the journals; the demo keeps them when an invariant broke, for the CLI to inspect. */
  void deleteWorkDir() throws IOException {
    try (var paths = Files.walk(workDir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  @Override
  public void close() {
    server.close();
  }
}
