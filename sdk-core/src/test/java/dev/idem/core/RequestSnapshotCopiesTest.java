package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.RequestSnapshot;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A snapshot keeps one private copy of the body (the builder's), and nothing a caller does to the
 * arrays it gave or got changes what is journaled and sent again, nor its fingerprint.
 */
class RequestSnapshotCopiesTest {
  private static final URI URL = URI.create("https://api.example.com/v1/orders");

  @Test
  void theJournaledBodyCannotBeChangedFromOutside() {
    byte[] given = "{\"a\":1}".getBytes(StandardCharsets.UTF_8);
    RequestSnapshot.Builder builder = RequestSnapshot.builder("POST", URL).body(given, "application/json");
    RequestSnapshot first = builder.build();
    Fingerprint before = Fingerprinter.defaults().fingerprint(first);
    given[5] = '2';
    first.body()[5] = '3';
    RequestSnapshot second = builder.build();
    assertArrayEquals("{\"a\":1}".getBytes(StandardCharsets.UTF_8), first.body());
    assertArrayEquals(first.body(), second.body());
    assertEquals(before, Fingerprinter.defaults().fingerprint(first));
    RequestSnapshot withHeader = builder.header("Authorization", "secret").header("X-Trace", "t").build();
    RequestSnapshot stripped = withHeader.withoutHeaders(Set.of("AUTHORIZATION"));
    assertEquals(List.of("t"), stripped.headers().get("x-trace"));
    assertEquals(Set.of("x-trace"), stripped.headers().keySet());
    assertArrayEquals(first.body(), stripped.body());
    assertEquals(first.contentType(), stripped.contentType());
    assertSame(stripped, stripped.withoutHeaders(Set.of("authorization")));
    assertEquals(before, Fingerprinter.defaults().fingerprint(stripped));
  }

  @Test
  void noHeadersIsAnEmptySortedUnmodifiableMap() {
    RequestSnapshot s = RequestSnapshot.builder("POST", URL).build();
    assertEquals(0, s.headers().size());
    assertEquals(s, RequestSnapshot.builder("post", URL).build());
    org.junit.jupiter.api.Assertions.assertThrows(UnsupportedOperationException.class,
        () -> s.headers().put("a", List.of("b")));
  }
}
