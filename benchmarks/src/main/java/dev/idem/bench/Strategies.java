package dev.idem.bench;

import dev.failsafe.okhttp.FailsafeCall;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.Journal;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The seven rows, all on clients derived from one base {@link OkHttpClient} (one connection pool), all
 * sending the same 90-byte JSON body to the same URL.
 */
final class Strategies {
  static final MediaType JSON = MediaType.get("application/json");
  /** 90 bytes of canonical JSON (RFC 8785: sorted keys, no spaces), like a small order. */
  static final byte[] BODY = body();

  static final String RAW = "raw OkHttp";
  static final String FAILSAFE = "Failsafe 3.3.2, 3 attempts";
  static final String RESILIENCE4J = "resilience4j-retry 2.4.0";
  static final String UUID_HEADER = "an in-memory UUID header (Stripe style)";
  static final String IDEM_MEMORY = "Idem, in-memory journal";
  static final String IDEM_MEMORY_KEEPING_NONE = "Idem, in-memory journal keeping no finished operation";
  static final String IDEM_DURABLE = "Idem, durable embedded journal (SQLite)";
  static final String FLOOR = "the floor: raw OkHttp + its key committed to SQLite first (group commit, no Idem code)";
  static final String FLOOR_JOURNAL_ROW = "the floor keeping the journal's row: raw OkHttp + the journal's SQLite"
      + " row (its table, indexes and columns) committed first (group commit, no Idem code)";
  static final String MEMORY_FLOOR = "the in-memory floor: raw OkHttp + a DRBG key, a SHA-256 fingerprint and a record"
      + " in a map, keeping 24,000 finished (no Idem code)";
  static final String MEMORY_FLOOR_KEEPING_NONE = "the in-memory floor keeping no finished operation";

  private Strategies() {
  }

  /** Every row, raw first (the baseline). */
  static List<Strategy> all(OkHttpClient base, URI url) {
    return List.of(raw(base, url), failsafe(base, url), resilience4j(base, url), uuidHeader(base, url),
        idemInMemory(base, url), idemInMemoryKeepingNone(base, url), memoryFloor(base, url, InMemoryFloor.DEFAULT_KEEP),
        memoryFloor(base, url, 0), idemDurable(base, url), durableFloor(base, url), durableFloorJournalRow(base, url));
  }

  /**
   * The rows named in {@code filter} (comma-separated short names: raw, failsafe, resilience4j, uuid,
   * memory, memory-none, memory-floor, memory-floor-none, durable, floor, floor-row; blank for all), raw always first, for
   * iterating on one row.
   */
  static List<Strategy> selected(OkHttpClient base, URI url, String filter) {
    if (filter == null || filter.isBlank()) {
      return all(base, url);
    }
    List<String> names = List.of(filter.toLowerCase(java.util.Locale.ROOT).split("\\s*,\\s*"));
    List<Strategy> rows = new java.util.ArrayList<>(List.of(raw(base, url)));
    if (names.contains("failsafe")) {
      rows.add(failsafe(base, url));
    }
    if (names.contains("resilience4j")) {
      rows.add(resilience4j(base, url));
    }
    if (names.contains("uuid")) {
      rows.add(uuidHeader(base, url));
    }
    if (names.contains("memory")) {
      rows.add(idemInMemory(base, url));
    }
    if (names.contains("memory-none")) {
      rows.add(idemInMemoryKeepingNone(base, url));
    }
    if (names.contains("memory-floor")) {
      rows.add(memoryFloor(base, url, InMemoryFloor.DEFAULT_KEEP));
    }
    if (names.contains("memory-floor-none")) {
      rows.add(memoryFloor(base, url, 0));
    }
    if (names.contains("durable")) {
      rows.add(idemDurable(base, url));
    }
    if (names.contains("floor")) {
      rows.add(durableFloor(base, url));
    }
    if (names.contains("floor-row")) {
      rows.add(durableFloorJournalRow(base, url));
    }
    return rows;
  }

  static Strategy raw(OkHttpClient client, URI url) {
    return strategy(RAW, dir -> () -> send(client, post(url).build()));
  }

  static Strategy failsafe(OkHttpClient client, URI url) {
    dev.failsafe.RetryPolicy<Response> policy = dev.failsafe.RetryPolicy.<Response>builder().withMaxAttempts(3).build();
    return strategy(FAILSAFE, dir -> () -> {
      try (Response r = FailsafeCall.with(policy).compose(client.newCall(post(url).build())).execute()) {
        check(r);
      }
    });
  }

  static Strategy resilience4j(OkHttpClient client, URI url) {
    Retry retry = Retry.of("bench", RetryConfig.custom().maxAttempts(3).build());
    return strategy(RESILIENCE4J, dir -> () -> retry.executeCallable(() -> {
      send(client, post(url).build());
      return null;
    }));
  }

  static Strategy uuidHeader(OkHttpClient client, URI url) {
    return strategy(UUID_HEADER,
        dir -> () -> send(client, post(url).header(LoopbackServer.KEY_HEADER, UUID.randomUUID().toString()).build()));
  }

  static Strategy idemInMemory(OkHttpClient base, URI url) {
    return strategy(IDEM_MEMORY, dir -> idem(base, url, new InMemoryJournal()));
  }

  /**
   * The in-memory row with {@code new InMemoryJournal(0)}: an operation leaves the journal once its
   * caller has its outcome. Beside the default row it splits P1c's gap between keeping finished
   * operations (16 MiB of them by default, packed, which at this row's rate live about a second: long
   * enough for the collector to copy them, and dropped later from memory no longer in the cache) and
   * the rest of Idem's code.
   */
  static Strategy idemInMemoryKeepingNone(OkHttpClient base, URI url) {
    return strategy(IDEM_MEMORY_KEEPING_NONE, dir -> idem(base, url, new InMemoryJournal(0)));
  }

  static Strategy idemDurable(OkHttpClient base, URI url) {
    return strategy(IDEM_DURABLE, dir -> idem(base, url, JdbcJournal.openEmbedded(dir.resolve("journal"))));
  }

  /**
   * The least a durable key costs, with no Idem code ({@link GroupCommitFloor}): the key and the
   * request's URL and body committed before the send, the outcome written after it without waiting
   * (it rides on the next commit, as Idem's does). P3's goal is a ratio to raw; this row says how
   * much of raw's rate a textbook durable design keeps on this machine.
   */
  static Strategy durableFloor(OkHttpClient client, URI url) {
    String request = url + " " + new String(BODY, StandardCharsets.UTF_8);
    return strategy(FLOOR, dir -> floorSession(client, url, request, GroupCommitFloor.open(dir.resolve("floor.db"))));
  }

  /**
   * The durable floor keeping what the journal keeps ({@link JournalRowTable}): the same group
   * commit, writing the journal's own table (its shipped migrations, every index) and rows of its
   * shape and size, with no Idem code. P3's goal is a ratio to raw; this row says how much of raw's
   * rate a textbook design that keeps the journal's records keeps on this machine, as the in-memory
   * floor keeping 24,000 does for P1c.
   */
  static Strategy durableFloorJournalRow(OkHttpClient client, URI url) {
    return strategy(FLOOR_JOURNAL_ROW, dir -> floorSession(client, url, null,
        GroupCommitFloor.open(dir.resolve("floor.db"), new JournalRowTable(url.toString(), BODY))));
  }

  private static Strategy.Session floorSession(OkHttpClient client, URI url, String text, GroupCommitFloor floor) {
    return new Strategy.Session() {
      @Override
      public void call() throws IOException {
        String key = UUID.randomUUID().toString();
        floor.write(key, text, "PENDING", true);
        send(client, post(url).header(LoopbackServer.KEY_HEADER, key).build());
        floor.write(key, text, "SUCCEEDED", false);
      }

      @Override
      public void close() throws IOException {
        floor.close();
      }
    };
  }

  /**
   * The least keying a call in memory costs, with no Idem code ({@link InMemoryFloor}): P1c's goal
   * is a ratio to raw; this row says how much of raw's rate the in-memory work the guarantee asks
   * for keeps on this machine, keeping {@code keep} finished operations as the default journal
   * keeps about as many (or none, beside the journal keeping none).
   */
  static Strategy memoryFloor(OkHttpClient client, URI url, int keep) {
    String target = url.toString();
    return strategy(keep == 0 ? MEMORY_FLOOR_KEEPING_NONE : MEMORY_FLOOR, dir -> {
      InMemoryFloor floor = new InMemoryFloor(keep);
      return () -> {
        String key = floor.begin("POST", target, BODY);
        send(client, post(url).header(LoopbackServer.KEY_HEADER, key).build());
        floor.finish(key, 201);
      };
    });
  }

  /**
   * Idem as the README tells an app to set it up: the interceptor, and no OkHttp-level retries.
   * The session closes {@code journal}.
   */
  static Strategy.Session idem(OkHttpClient base, URI url, Journal journal) {
    IdemOkHttp idem = IdemOkHttp.builder(IdempotentExecutor.builder().journal(journal).build()).build();
    OkHttpClient client = base.newBuilder().addInterceptor(idem.interceptor()).retryOnConnectionFailure(false).build();
    return new Strategy.Session() {
      @Override
      public void call() throws IOException {
        send(client, post(url).tag(IdempotentOperation.class, IdempotentOperation.of("create-order")).build());
      }

      @Override
      public void close() throws IOException {
        journal.close();
      }
    };
  }

  private static Request.Builder post(URI url) {
    return new Request.Builder().url(url.toString()).post(RequestBody.create(BODY, JSON));
  }

  private static void send(OkHttpClient client, Request request) throws IOException {
    try (Response r = client.newCall(request).execute()) {
      check(r);
    }
  }

  private static void check(Response r) throws IOException {
    // Read the body whole, as an app would, so that the connection goes back to the pool.
    r.body().bytes();
    if (r.code() != 201) {
      throw new IOException("expected 201, got " + r.code());
    }
  }

  private static byte[] body() {
    String head = "{\"amount\":4200,\"currency\":\"EUR\",\"customer\":\"cus_00001\",\"note\":\"";
    String tail = "\",\"order\":\"ord_000001\"}";
    byte[] b = (head + "x".repeat(90 - head.length() - tail.length()) + tail).getBytes(StandardCharsets.UTF_8);
    if (b.length != 90) {
      throw new AssertionError("body is " + b.length + " bytes");
    }
    return b;
  }

  private interface Opener {
    Strategy.Session open(Path dir) throws Exception;
  }

  private static Strategy strategy(String label, Opener opener) {
    return new Strategy() {
      @Override
      public String label() {
        return label;
      }

      @Override
      public Session open(Path workDir) throws Exception {
        return opener.open(workDir);
      }
    };
  }
}
