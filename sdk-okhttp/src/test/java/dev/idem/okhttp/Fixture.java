package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import dev.idem.core.testing.VirtualTime;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;

/**
 * One test's world for the OkHttp adapter: virtual time and an in-memory journal, executors on
 * both, and the clients and requests the tests send to the testkit's {@link IdempotentServer}.
 * Backoff and Retry-After waits advance the virtual clock and never really sleep.
 *
 * <p>Not thread-safe to configure; one instance per test (a field of the test class).
 */
final class Fixture {
  static final MediaType JSON = MediaType.get("application/json");
  /** The body most tests send. */
  static final String ORDER = "{\"qty\":1}";

  final VirtualTime time = new VirtualTime();
  final InMemoryJournal journal = new InMemoryJournal();

  /**
   * An executor on this fixture's journal and virtual time. Random is 0.5, so a full-jitter
   * backoff waits exactly half its ceiling: 100 ms, 200 ms, 400 ms under the default policy.
   */
  IdempotentExecutor.Builder executorBuilder() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).random(() -> 0.5);
  }

  /** The adapter over a default {@link #executorBuilder()} executor. */
  IdemOkHttp idem() {
    return IdemOkHttp.builder(executorBuilder().build()).build();
  }

  /**
   * A client with the adapter's interceptor. OkHttp's own silent retry of a broken connection is
   * off so that request counts are exact; the key makes those retries harmless anyway (see
   * {@code IdempotencyInterceptorTest.defaultClientRetriesStillOneEffect}).
   */
  static OkHttpClient client(IdemOkHttp idem) {
    return new OkHttpClient.Builder().addInterceptor(idem.interceptor()).retryOnConnectionFailure(false).build();
  }

  /** A JSON POST tagged with {@code op}. */
  static Request order(URI url, IdempotentOperation op, String json) {
    return untaggedPost(url, json).newBuilder().tag(IdempotentOperation.class, op).build();
  }

  /** A JSON POST of {@link #ORDER} tagged with {@code op}. */
  static Request order(URI url, IdempotentOperation op) {
    return order(url, op, ORDER);
  }

  /** A JSON POST of {@link #ORDER} with no operation tag. */
  static Request untaggedPost(URI url) {
    return untaggedPost(url, ORDER);
  }

  private static Request untaggedPost(URI url, String json) {
    return new Request.Builder().url(url.toString()).post(RequestBody.create(json, JSON)).build();
  }

  /** The journal's record of {@code op}; fails if there is none. */
  OperationRecord record(IdempotentOperation op) throws IOException {
    return journal.find(op.id()).orElseThrow(() -> new AssertionError("not journaled: " + op.id()));
  }

  /** Every record in the journal, whatever its state. */
  List<OperationRecord> allRecords() throws IOException {
    List<OperationRecord> all = new ArrayList<>();
    for (OperationState s : OperationState.values()) {
      OperationId after = null;
      for (List<OperationRecord> page; !(page = journal.findByState(s, after, 100)).isEmpty(); ) {
        all.addAll(page);
        after = page.get(page.size() - 1).id();
      }
    }
    return all;
  }

  /** The raw key header of every request the server received, in order; empty where absent. */
  static List<Optional<String>> keysSent(IdempotentServer server) {
    return server.recordedRequests().stream().map(ReceivedRequest::keyHeader).toList();
  }

  /** Asserts the server received {@code requests} requests, each with exactly this key header. */
  static void assertKeyOnEveryRequest(IdempotentServer server, String rawKeyHeader, int requests) {
    List<ReceivedRequest> received = server.recordedRequests();
    assertEquals(requests, received.size(), "requests received");
    for (ReceivedRequest r : received) {
      assertEquals(Optional.of(rawKeyHeader), r.keyHeader(), "request " + r.sequence());
    }
  }

  /** The reference server's default reply body for effect {@code n} under {@code key}. */
  static String createdBody(int n, Object key) {
    return "{\"id\":\"ord_" + n + "\",\"effect\":" + n + ",\"key\":\"" + key + "\"}";
  }
}
