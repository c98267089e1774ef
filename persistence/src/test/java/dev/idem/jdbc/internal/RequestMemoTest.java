package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.spi.RequestSnapshot;
import java.net.URI;
import org.junit.jupiter.api.Test;

/**
 * The memo of begun requests answers only for the exact stored request (its checksum), and stays
 * within its byte budget however many operations are begun.
 */
class RequestMemoTest {
  private static OperationId id(int n) {
    return new OperationId("s", "op", IdempotencyKey.of("key-" + n));
  }

  private static RequestSnapshot request(int bodyBytes) {
    return RequestSnapshot.builder("POST", URI.create("https://api.example.test/v1/orders"))
        .body(new byte[bodyBytes], "application/json").build();
  }

  @Test
  void removeForgetsOnlyTheOperationItNamesAndIsANoOpOnAnEmptyMemo() {
    RequestMemo memo = new RequestMemo(1 << 20);
    memo.remove(id(9)); // the inline call's path: nothing kept, nothing to remove
    assertEquals(0, memo.size());

    RequestSnapshot r = request(10);
    memo.put(id(1), "check-a", r);
    memo.put(id(2), "check-b", r);
    memo.remove(id(1));
    assertEquals(1, memo.size());
    assertNull(memo.get(id(1), "check-a"));
    assertSame(r, memo.get(id(2), "check-b"), "the other operation's entry stays");
    memo.remove(id(2));
    assertEquals(0, memo.size());
    memo.put(id(3), "check-c", r);
    assertSame(r, memo.get(id(3), "check-c"), "a memo emptied by removes keeps what is put next");
  }

  @Test
  void answersOnlyForTheChecksumItWasBegunWith() {
    RequestMemo memo = new RequestMemo(1 << 20);
    RequestSnapshot r = request(10);
    memo.put(id(1), "check-a", r);

    assertSame(r, memo.get(id(1), "check-a"));
    assertNull(memo.get(id(1), "check-b"), "a row begun again with another request, or changed, is decoded");
    assertNull(memo.get(id(1), null), "a row without a checksum is decoded");
    assertNull(memo.get(id(2), "check-a"));
    memo.remove(id(1));
    assertNull(memo.get(id(1), "check-a"), "a finished operation is forgotten");
  }

  @Test
  void staysWithinItsByteBudgetDroppingTheOldestFirst() {
    long budget = 64 * 1024;
    RequestMemo memo = new RequestMemo(budget);
    for (int i = 0; i < 10_000; i++) {
      memo.put(id(i), "c" + i, request(1000));
    }
    assertTrue(memo.size() * 1000L <= budget, "kept " + memo.size() + " requests of 1000 bytes in " + budget);
    assertTrue(memo.size() > 0);
    assertNull(memo.get(id(0), "c0"), "the oldest went first");
    assertEquals(request(1000).bodyLength(), memo.get(id(9_999), "c9999").bodyLength());
  }

  @Test
  void aRequestLargerThanAnEighthOfTheBudgetIsNotKept() {
    RequestMemo memo = new RequestMemo(64 * 1024);
    memo.put(id(1), "c", request(9 * 1024));
    assertEquals(0, memo.size());
    assertNull(memo.get(id(1), "c"));
  }
}
