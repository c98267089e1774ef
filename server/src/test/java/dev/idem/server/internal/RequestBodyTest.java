package dev.idem.server.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The guard reads a keyed body into an array of its declared size, and never past its limit. */
class RequestBodyTest {
  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    Arrays.fill(b, (byte) 'x');
    return b;
  }

  @Test
  void aDeclaredLengthWithinTheLimitIsReadWhole() throws IOException {
    assertArrayEquals(bytes(50), RequestBody.read(new ByteArrayInputStream(bytes(50)), 50, 101));
    assertArrayEquals(new byte[0], RequestBody.read(new ByteArrayInputStream(new byte[0]), 0, 101));
  }

  @Test
  void aBodyShorterThanDeclaredIsWhatArrived() throws IOException {
    assertArrayEquals(bytes(30), RequestBody.read(new ByteArrayInputStream(bytes(30)), 50, 101));
  }

  @Test
  void aBodyWithoutOrOverItsLimitIsReadUpToTheLimit() throws IOException {
    assertEquals(101, RequestBody.read(new ByteArrayInputStream(bytes(500)), -1, 101).length, "chunked");
    assertArrayEquals(bytes(70), RequestBody.read(new ByteArrayInputStream(bytes(70)), -1, 101), "chunked, small");
    assertEquals(101, RequestBody.read(new ByteArrayInputStream(bytes(500)), 500, 101).length, "declared too large");
  }

  @Test
  void onlyAPlainNonNegativeNumberIsADeclaredLength() {
    assertEquals(42, RequestBody.declaredLength("42"));
    assertEquals(0, RequestBody.declaredLength("0"));
    assertEquals(-1, RequestBody.declaredLength(null));
    assertEquals(-1, RequestBody.declaredLength(""));
    assertEquals(-1, RequestBody.declaredLength("-1"));
    assertEquals(-1, RequestBody.declaredLength(" 42"));
    assertEquals(-1, RequestBody.declaredLength("4 2"));
    assertEquals(-1, RequestBody.declaredLength("1234567890123456789"), "too long to be a body the guard reads");
    assertEquals(-1, RequestBody.declaredLength("\u0664\u0662"), "non-ASCII digits");
  }

  @Test
  void aTransferCodingOverridesTheDeclaredLength() throws IOException {
    assertEquals(42, RequestBody.declaredLength("42", null));
    assertEquals(-1, RequestBody.declaredLength("5", "chunked"));
    // A chunked body of 70 bytes that also says Content-Length: 5 is read whole, not cut at 5.
    assertArrayEquals(bytes(70), RequestBody.read(new ByteArrayInputStream(bytes(70)),
        RequestBody.declaredLength("5", "chunked"), 101));
  }
}
