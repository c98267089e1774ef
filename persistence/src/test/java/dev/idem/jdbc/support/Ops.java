package dev.idem.jdbc.support;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** Builds operations for tests, with keys from a seeded source so runs are reproducible. */
public final class Ops {
  public static final Instant T0 = Instant.parse("2026-11-30T10:00:00.123456789Z");

  private final Random random;

  public Ops(long seed) {
    this.random = new Random(seed);
  }

  public IdempotencyKey key() {
    return IdempotencyKey.generate(random);
  }

  public OperationId id(String operation) {
    return new OperationId("tenant-a", operation, key());
  }

  public static RequestSnapshot request(String body) {
    return RequestSnapshot.builder("POST", URI.create("https://api.example.test/v1/orders?x=1"))
        .header("Content-Type", "application/json")
        .header("X-Trace", "t1")
        .body(body.getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
  }

  public static NewOperation op(OperationId id, String body) {
    return op(id, null, body);
  }

  public static NewOperation op(OperationId id, String reference, String body) {
    RequestSnapshot r = request(body);
    return new NewOperation(id, reference, Fingerprinter.defaults().fingerprint(r), r, T0);
  }

  public NewOperation newOp(String body) {
    return op(id("create-order"), body);
  }

  public static ResponseSnapshot ok(String body) {
    return new ResponseSnapshot(201, Map.of("Content-Type", List.of("application/json"), "Idempotent-Replayed",
        List.of("false")), body.getBytes(StandardCharsets.UTF_8));
  }

  public static AttemptRecord attempt(int number, long generation, Instant at) {
    return new AttemptRecord(number, generation, at, at.plusMillis(5), Classification.AMBIGUOUS, null,
        "java.net.SocketTimeoutException", "read timeout", Duration.ofMillis(250), "retry after backoff");
  }
}
