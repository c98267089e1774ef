package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The owner name an operator gives (often a pod's name, up to 253 characters on Kubernetes) is
 * written into every lease: the builder refuses, at startup, one the journal would not store as
 * given. Over 200 characters, the owner column of PostgreSQL and H2 (VARCHAR(200)) and SQLite's
 * check fail every claim as a database error; a NUL fails every claim on PostgreSQL; an unpaired
 * surrogate is stored as '?', so the instance restarted under the same name never matches its
 * own leases. Before the fix only a blank name was refused.
 */
class OwnerNameTest {
  @Test
  void anOwnerLongerThan200CharactersIsRefusedNamingTheLimit() {
    String podName = "checkout-" + "a".repeat(244); // 253, Kubernetes' longest
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> IdempotentExecutor.builder().owner(podName));
    assertTrue(e.getMessage().contains("owner") && e.getMessage().contains("200"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> IdempotentExecutor.builder().owner("a".repeat(201)));
  }

  @Test
  void anOwnerOf200CharactersIsKept() {
    String owner = "a".repeat(198) + "\uD83D\uDE00";
    try (IdempotentExecutor executor = IdempotentExecutor.builder().journal(new InMemoryJournal()).owner(owner)
        .build()) {
      assertEquals(owner, executor.owner());
    }
  }

  @Test
  void anOwnerWithAControlCharacterIsRefusedWithoutEchoingIt() {
    for (String owner : new String[] {"pod\u0000a", "pod-a\n", "pod\u007fa"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> IdempotentExecutor.builder().owner(owner), () -> "accepted " + owner.codePoints().boxed().toList());
      assertTrue(e.getMessage().contains("owner") && e.getMessage().contains("control character"), e.getMessage());
      assertFalse(e.getMessage().contains(owner), "the name is not echoed: " + e.getMessage());
    }
  }

  @Test
  void anOwnerWithAnUnpairedSurrogateIsRefused() {
    for (String owner : new String[] {"pod-\uD83D", "pod-\uDE00-a", "pod-\uDE00\uD83D"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> IdempotentExecutor.builder().owner(owner));
      assertTrue(e.getMessage().contains("owner") && e.getMessage().contains("unpaired surrogate"), e.getMessage());
    }
  }

  @Test
  void aBlankOwnerIsStillRefused() {
    assertThrows(IllegalArgumentException.class, () -> IdempotentExecutor.builder().owner(" "));
  }
}
