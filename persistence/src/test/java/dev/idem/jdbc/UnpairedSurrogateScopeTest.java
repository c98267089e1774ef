package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * OperationId accepts any non-blank scope, but sqlite-jdbc encodes a lone UTF-16 surrogate as '?':
 * scope "t\uD800" was stored as "t?", so it collided with tenant "t?" (and every other lone
 * surrogate): the second tenant's begin of the same key was answered with the first tenant's
 * operation, and its own request was never sent. The journal now refuses such a scope, operation
 * name or reference at begin, naming the field, as a malformed key is refused.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class UnpairedSurrogateScopeTest {
  @TempDir
  Path tmp;

  @Test
  void aBeginWithAnUnpairedSurrogateIsRefusedInsteadOfSharingAnotherTenantsOperation() throws Exception {
    OperationId tenantA = new OperationId("t?", "charge", IdempotencyKey.of("order-42"));
    OperationId tenantB = new OperationId("t\uD800", "charge", IdempotencyKey.of("order-42"));
    try (JdbcJournal j = JdbcJournal.embedded(tmp.resolve("j")).closeOnShutdown(false).open()) {
      assertTrue(j.begin(Ops.op(tenantA, "{\"amount\":5}")).created());
      IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
          () -> j.begin(Ops.op(tenantB, "{\"amount\":5}")), "tenant B's begin was answered with tenant A's operation");
      assertTrue(refused.getMessage().contains("scope"), refused.getMessage());
      assertFalse(refused.getMessage().contains("t\uD800"), "the value itself is not echoed");

      OperationId badName = new OperationId("tenant-c", "charge\uDC00", IdempotencyKey.of("order-42"));
      assertTrue(assertThrows(IllegalArgumentException.class, () -> j.begin(Ops.op(badName, "{}")))
          .getMessage().contains("operation name"));
      OperationId fine = new OperationId("tenant-c", "charge", IdempotencyKey.of("order-43"));
      assertTrue(assertThrows(IllegalArgumentException.class, () -> j.begin(Ops.op(fine, "inv-\uD83D", "{}")))
          .getMessage().contains("reference"));
      // A pair is a character like any other.
      OperationId emoji = new OperationId("t\uD83D\uDE00", "charge", IdempotencyKey.of("order-42"));
      assertTrue(j.begin(Ops.op(emoji, "{}")).created());
      assertEquals(emoji, j.find(emoji).orElseThrow().id());
      assertEquals(tenantA, j.find(tenantA).orElseThrow().id());
    }
  }
}
