package dev.idem.okhttp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.adapter.CaptureDeadline;
import java.util.List;
import java.util.Random;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.Buffer;
import org.junit.jupiter.api.Test;

/** What the capture of a live response keeps, and what it leaves to the caller who reads on. */
class ResponseCaptureTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private static Response response(Buffer body, String... headers) {
    Response.Builder b = new Response.Builder().request(new Request.Builder().url("http://localhost/orders").build())
        .protocol(Protocol.HTTP_1_1).code(201).message("Created")
        .body(ResponseBody.create(body, JSON, body.size()));
    for (int i = 0; i < headers.length; i += 2) {
      b.addHeader(headers[i], headers[i + 1]);
    }
    return b.build();
  }

  private static byte[] firstSegment(Buffer buffer) {
    try (Buffer.UnsafeCursor cursor = buffer.readUnsafe()) {
      cursor.seek(0);
      return cursor.data;
    }
  }

  @Test
  void keepsABodyOfManySegmentsWholeAndTheCallerReadsItFromTheStart() throws Exception {
    byte[] bytes = new byte[20_000]; // three of Okio's 8 KiB segments
    new Random(7).nextBytes(bytes);
    Response raw = response(new Buffer().write(bytes));

    ResponseSnapshot captured = ResponseCapture.capture(raw, CaptureDeadline.NONE);

    assertArrayEquals(bytes, captured.body());
    try (raw) {
      assertArrayEquals(bytes, raw.body().bytes());
    }
  }

  // The capture used Buffer.snapshot(), which marks the body's segments shared: Okio then never
  // returns them to its pool once the caller has read them, so every keyed call left an 8 KiB
  // segment to the garbage collector (half of what the adapter allocated per call).
  @Test
  void leavesTheBodysSegmentsTheBuffersOwn() {
    Buffer body = new Buffer().writeUtf8("{\"id\":1}");
    byte[] segment = firstSegment(body);

    ResponseCapture.capture(response(body), CaptureDeadline.NONE);

    // A read-write cursor copies a shared segment before handing it out, and hands an owned one as it is.
    try (Buffer.UnsafeCursor cursor = body.readAndWriteUnsafe()) {
      cursor.seek(0);
      assertSame(segment, cursor.data, "the capture shared the body's segment");
    }
  }

  @Test
  void namesDifferingOnlyInCaseKeepTheReceivedOrderOfTheirValues() {
    Response raw = response(new Buffer().writeUtf8("{}"), "X-Trace", "1", "x-trace", "2", "X-TRACE", "3",
        "Content-Type", "application/json");

    ResponseSnapshot captured = ResponseCapture.capture(raw, CaptureDeadline.NONE);

    assertEquals(List.of("1", "2", "3"), captured.headers().get("x-trace"));
    assertEquals(List.of("content-type", "x-trace"), List.copyOf(captured.headers().keySet()));
  }
}
