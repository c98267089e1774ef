package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The header view of a received request, without a server. */
class ReceivedRequestTest {
  @Test
  void headerNamesAreFoldedToLowerCaseAndEqualNamesMergedInOrder() {
    Map<String, List<String>> sent = new LinkedHashMap<>();
    sent.put("X-Trace", List.of("a"));
    sent.put("Authorization", List.of("Bearer t"));
    sent.put("x-TRACE", List.of("b", "c"));

    ReceivedRequest r = new ReceivedRequest(1, "POST", "/orders", "anonymous", Optional.empty(), "{}", sent);

    assertEquals(List.of("x-trace", "authorization"), List.copyOf(r.headers().keySet()));
    assertEquals(List.of("a", "b", "c"), r.headerValues("X-Trace"));
    assertEquals(Optional.of("a"), r.header("x-trace"));
    assertThrows(UnsupportedOperationException.class, () -> r.headers().put("cookie", List.of("s")));
    assertThrows(UnsupportedOperationException.class, () -> r.headers().get("x-trace").add("d"));
  }

  @Test
  void aHeaderWithoutValuesIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new ReceivedRequest(
        1, "POST", "/orders", "anonymous", Optional.empty(), "", Map.of("X-Empty", List.of())));
  }
}
