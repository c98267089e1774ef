package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.FakeHost;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import dev.idem.core.spi.RequestSnapshot;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * One key per business reference: the "Why" of issue 14 (two submissions with the same reference
 * made two keys and two server effects), and the secret that derives those keys.
 */
class ReferenceKeyTest {
  private static final byte[] SECRET = "0123456789abcdef-test-secret".getBytes(StandardCharsets.UTF_8);

  private final VirtualTime time = new VirtualTime();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  private IdempotentExecutor executor(InMemoryJournal journal, byte[] secret) {
    IdempotentExecutor.Builder b = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5);
    if (secret != null) {
      b.referenceKeySecret(secret);
    }
    return b.build();
  }

  private static RequestSnapshot cart() {
    return Requests.order("{\"cart\":\"cart-42\"}");
  }

  @Test
  void withReferenceOnlyLabelsTwoSubmissionsAreTwoKeysAndTwoEffects() throws Exception {
    // What the issue found, kept as documentation of what reference() means: a label, not a key.
    IdempotentExecutor idem = executor(new InMemoryJournal(), SECRET);
    Outcome first = idem.execute(Operation.builder("create-order", cart()).reference("cart-42").build(), host);
    Outcome second = idem.execute(Operation.builder("create-order", cart()).reference("cart-42").build(), host);
    assertNotEquals(first.operationId().key(), second.operationId().key());
    assertEquals(2, host.effects());
  }

  @Test
  void twoSubmissionsOfOneReferenceAreOneKeyAndOneEffect() throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    IdempotentExecutor idem = executor(journal, SECRET);
    Outcome first = idem.execute(Operation.forReference("create-order", "cart-42", cart()).build(), host);
    Outcome second = idem.execute(Operation.forReference("create-order", "cart-42", cart()).build(), host);

    IdempotencyKey expected = IdempotencyKey.derive(SECRET, OperationId.DEFAULT_SCOPE, "create-order", "cart-42");
    assertEquals(expected, first.operationId().key());
    assertEquals(expected, second.operationId().key());
    assertTrue(second.fromJournal(), "the second submission was answered from the journal");
    assertEquals(1, host.totalAttempts(), "sent once");
    assertEquals(1, host.effects());
    assertEquals(List.of(first.operationId()),
        idem.findByReference(OperationId.DEFAULT_SCOPE, "cart-42").stream().map(OperationRecord::id).toList());
  }

  @Test
  void afterARestartWithAnEmptyJournalTheSameReferenceSendsTheSameKey() throws Exception {
    // The crash lost the journal; the app stored nothing. The server's dedup by key answers the
    // resubmission with a replay only because the key comes out the same.
    Outcome before = executor(new InMemoryJournal(), SECRET)
        .execute(Operation.forReference("create-order", "cart-42", cart()).build(), host);
    Outcome after = executor(new InMemoryJournal(), SECRET.clone())
        .execute(Operation.forReference("create-order", "cart-42", cart()).build(), host);
    assertEquals(before.operationId(), after.operationId());
    assertEquals(2, host.attempts(before.operationId().key()), "both went out, with one key");
    assertEquals(1, host.effects(), "the server ran it once");
  }

  @Test
  void theKeyDependsOnNameScopeReferenceAndSecret() throws Exception {
    IdempotentExecutor idem = executor(new InMemoryJournal(), SECRET);
    IdempotencyKey base = idem.execute(Operation.forReference("create-order", "cart-42", cart()).build(), host)
        .operationId().key();
    assertNotEquals(base, idem.execute(Operation.forReference("create-order", "cart-43", cart()).build(), host)
        .operationId().key());
    assertNotEquals(base, idem.execute(Operation.forReference("refund-order", "cart-42", cart()).build(), host)
        .operationId().key());
    assertNotEquals(base, idem.execute(Operation.forReference("create-order", "cart-42", cart()).scope("tenant-7")
        .build(), host).operationId().key());
    byte[] other = SECRET.clone();
    other[0] ^= 1;
    assertNotEquals(base, executor(new InMemoryJournal(), other)
        .execute(Operation.forReference("create-order", "cart-42", cart()).build(), host).operationId().key());
    assertFalse(base.value().contains("cart"), "the reference never appears in the key");
  }

  @Test
  void withoutASecretBeginRefusesAndNothingIsJournaledOrSent() throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    IdempotentExecutor idem = executor(journal, null);
    Operation op = Operation.forReference("create-order", "cart-42", cart()).build();

    IllegalStateException sync = assertThrows(IllegalStateException.class, () -> idem.execute(op, host));
    assertTrue(sync.getMessage().contains("referenceKeySecret"), sync.getMessage());
    assertThrows(IllegalStateException.class, () -> idem.executeAsync(op, host));
    assertThrows(IllegalStateException.class, () -> idem.enqueue(op));
    assertEquals(0, host.totalAttempts(), "nothing sent");
    assertEquals(0, journal.count(OperationState.PENDING) + journal.count(OperationState.IN_FLIGHT)
        + journal.count(OperationState.SUCCEEDED), "nothing journaled");
  }

  @Test
  void aSecretShorterThan16BytesIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> IdempotentExecutor.builder().referenceKeySecret(new byte[15]));
    assertTrue(e.getMessage().contains("16"), e.getMessage());
  }

  @Test
  void theDerivedKeyIsUnknownUntilBeginAndCannotBeCombinedWithAnOwnKey() throws Exception {
    Operation op = Operation.forReference("create-order", "cart-42", cart()).build();
    assertTrue(op.keyFromReference());
    assertEquals("create-order", op.name());
    assertThrows(IllegalStateException.class, op::id);
    assertFalse(op.toString().contains("not-yet-derived"), op.toString());
    assertThrows(IllegalArgumentException.class, () -> Operation.forReference("create-order", "cart-42", cart())
        .key(IdempotencyKey.generate()).build());
    assertThrows(IllegalArgumentException.class, () -> Operation.forReference(" ", "cart-42", cart()).build(),
        "the name is still checked when built");
  }

  @Test
  void aBuilderCopyOfTheSecretIsUsedSoChangingTheCallersArrayChangesNothing() throws Exception {
    byte[] secret = SECRET.clone();
    IdempotentExecutor.Builder b = IdempotentExecutor.builder().journal(new InMemoryJournal()).clock(time.clock())
        .referenceKeySecret(secret);
    Arrays.fill(secret, (byte) 7);
    Outcome out = b.build().execute(Operation.forReference("create-order", "cart-42", cart()).build(), host);
    assertEquals(IdempotencyKey.derive(SECRET, OperationId.DEFAULT_SCOPE, "create-order", "cart-42"),
        out.operationId().key());
  }
}
