package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import org.junit.jupiter.api.Test;

/** A row survives the trip through the log's bytes exactly, nulls and non-ASCII text included. */
class RowImageTest {
  @Test
  void everyColumnRoundTrips() throws Exception {
    RawRow full = new RawRow("tenant-ä", "create-order", "k-1", "cart-42", "a".repeat(64), "{\"body\":\"é€😀\"}",
        "IN_FLIGHT", "host-1", 7, 1_000L, 2_000L, 3_000L, 4_000L, "[{\"n\":1}]", "{\"status\":201}", "why",
        5_000L, "quarantined because");
    assertEquals(full, RowImage.decode(RowImage.encode(full)));
  }

  @Test
  void nullColumnsStayNull() throws Exception {
    RawRow sparse = new RawRow("s", "o", "k", null, "f", "{}", "PENDING", null, 0, null, null, 1, 1, "[]", null,
        null, null, null);
    assertEquals(sparse, RowImage.decode(RowImage.encode(sparse)));
  }

  @Test
  void anImageOfAnotherFormatIsRefused() {
    byte[] bytes = RowImage.encode(new RawRow("s", "o", "k", null, "f", "{}", "PENDING", null, 0, null, null, 1, 1,
        "[]", null, null, null, null));
    bytes[0] = 9;
    assertThrows(IOException.class, () -> RowImage.decode(bytes));
  }
}
