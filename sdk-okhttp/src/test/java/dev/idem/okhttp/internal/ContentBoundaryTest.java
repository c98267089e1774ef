package dev.idem.okhttp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import okhttp3.MediaType;
import org.junit.jupiter.api.Test;

/** The byte-level boundary rewrite: which bytes change, and which do not. */
class ContentBoundaryTest {
  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static String text(byte[] b) {
    return new String(b, StandardCharsets.ISO_8859_1);
  }

  private static String nested(String outer, String inner, boolean withLength) {
    String innerBody = "--" + inner + "\r\nContent-Type: text/plain\r\n\r\npage 1\r\n--" + inner + "--\r\n";
    return "--" + outer + "\r\nContent-Disposition: form-data; name=\"files\"\r\n"
        + "Content-Type: multipart/mixed; boundary=\"" + inner + "\"\r\n"
        + (withLength ? "Content-Length: " + innerBody.length() + "\r\n" : "") + "\r\n"
        + innerBody + "\r\n--" + outer + "--\r\n";
  }

  @Test
  void theSameContentUnderOtherBoundariesGetsTheSameBytesAndType() {
    ContentBoundary.Rebound a = ContentBoundary.of(ascii(nested("aaaaaaaa-1111", "x1", true)),
        MediaType.get("multipart/form-data; boundary=aaaaaaaa-1111"));
    ContentBoundary.Rebound b = ContentBoundary.of(ascii(nested("bbbbbbbb-2222", "y2", true)),
        MediaType.get("multipart/form-data; boundary=bbbbbbbb-2222"));
    assertArrayEquals(a.bytes(), b.bytes());
    assertEquals(a.type(), b.type());
    String outer = a.type().parameter("boundary");
    assertTrue(outer.startsWith("idem-") && outer.length() == 32, outer);
    String body = text(a.bytes());
    assertFalse(body.contains("x1") || body.contains("aaaaaaaa"), body);
    // The inner part still declares the boundary its delimiters use, and its own length.
    int typeAt = body.indexOf("multipart/mixed; boundary=\"") + "multipart/mixed; boundary=\"".length();
    String inner = body.substring(typeAt, body.indexOf('"', typeAt));
    assertTrue(body.contains("\r\n\r\n--" + inner + "\r\nContent-Type: text/plain"), body);
    int innerStart = body.indexOf("\r\n\r\n--" + inner) + 4;
    int innerEnd = body.indexOf("\r\n--" + outer + "--");
    assertTrue(body.contains("Content-Length: " + (innerEnd - innerStart) + "\r\n"), body);
  }

  @Test
  void aBoundaryNotAtALineStartIsContentAndKept() {
    String b = "0123456789abcdef0123456789abcdef-b";
    String body = "--" + b + "\r\nContent-Type: text/plain\r\n\r\nsee x--" + b + " here\r\n--" + b + "--\r\n";
    ContentBoundary.Rebound r = ContentBoundary.of(ascii(body), MediaType.get("multipart/mixed; boundary=" + b));
    String out = text(r.bytes());
    assertTrue(out.contains("see x--" + b + " here"), out);
    assertFalse(out.startsWith("--" + b), out);
    assertEquals(body.length(), out.length(), "a boundary of 34 characters keeps its length");
  }

  @Test
  void aBodyThatIsNotTheMultipartItsTypeSaysIsKept() {
    assertNull(ContentBoundary.of(ascii("plain"), MediaType.get("multipart/mixed; boundary=zz")));
    assertNull(ContentBoundary.of(ascii("--zz\r\n"), MediaType.get("text/plain; boundary=zz")));
  }
}
