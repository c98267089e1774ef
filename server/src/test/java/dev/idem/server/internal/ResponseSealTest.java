package dev.idem.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The checksum of a stored answer is on disk in every store: the bytes it covers, and their order,
 * can never change, or every answer stored before would be refused as damaged. The expected texts
 * were computed by the first implementation (issue 26).
 */
class ResponseSealTest {
  private static final byte[] BODY = "{\"order\":1}".getBytes(StandardCharsets.UTF_8);

  private static Map<String, List<String>> headers() {
    Map<String, List<String>> h = new LinkedHashMap<>();
    h.put("Content-Type", List.of("application/json"));
    h.put("Location", List.of("/orders/1", "/orders/one"));
    return h;
  }

  @Test
  void sealsAsTheFirstImplementationDid() {
    assertEquals(":sha256=89e06b960fa62f5495be8f96bb925c8f209af5b80935beacd573b1ab28d6ec52\n"
        + "Content-Type:application/json\nLocation:/orders/1\nLocation:/orders/one\n",
        ResponseSeal.seal("alice", "POST /orders", "k-1", 201, headers(), BODY, false));
    assertEquals(":sha256=487bd7a545d069ecf7905c1daae4b019ebfdc7148de1801ec91c3361ebd60f57\n",
        ResponseSeal.seal("bob", "PUT /x", "k\u00e9", 200, Map.of(), new byte[0], true));
    assertEquals(":sha256=ecff148ca8f28a02f262fea5d9078f723de42584759a3215938abd7727dd733a\n",
        ResponseSeal.seal("bob", "PUT /x", "k", 500, Map.of(), null, false));
  }

  @Test
  void aSealMatchesOnlyTheAnswerAndRecordItWasMadeFor() {
    String sealed = ResponseSeal.seal("alice", "POST /orders", "k-1", 201, headers(), BODY, false);
    assertTrue(ResponseSeal.matches("alice", "POST /orders", "k-1", 201, sealed, BODY, false));
    assertFalse(ResponseSeal.matches("alice", "POST /orders", "k-2", 201, sealed, BODY, false), "another key");
    assertFalse(ResponseSeal.matches("alice", "POST /orders", "k-1", 200, sealed, BODY, false), "another status");
    assertFalse(ResponseSeal.matches("alice", "POST /orders", "k-1", 201, sealed, "{\"order\":2}".getBytes(
        StandardCharsets.UTF_8), false), "another body");
    // Called again and again on one thread (the digest is reused per thread), it gives the same answer.
    for (int i = 0; i < 3; i++) {
      assertEquals(sealed, ResponseSeal.seal("alice", "POST /orders", "k-1", 201, headers(), BODY, false));
    }
  }
}
