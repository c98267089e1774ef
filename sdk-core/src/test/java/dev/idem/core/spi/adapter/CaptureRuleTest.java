package dev.idem.core.spi.adapter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CaptureRuleTest {
  private static final int CAP = ResponseSnapshot.MAX_CAPTURED_BODY;

  @Test
  void aSuccessIsReadOnlyWhenItsDeclaredLengthFitsAndAnythingElseUpToTheCap() {
    assertTrue(CaptureRule.readsBody(201, CAP, false));
    assertFalse(CaptureRule.readsBody(201, CAP + 1, false), "streams to the caller");
    assertFalse(CaptureRule.readsBody(200, -1, false), "unknown length: streams to the caller");
    assertTrue(CaptureRule.readsBody(400, -1, false), "the classifier reads an error body");
    assertTrue(CaptureRule.readsBody(302, CAP * 10L, false));
    assertTrue(CaptureRule.readsBody(200, -1, true), "a resume has no other reader");
  }

  @Test
  void theBodyIsKeptOnlyWholeAndOtherwiseMarkedWithItsDeclaredLength() {
    Map<String, List<String>> headers = Map.of("Content-Type", List.of("application/json"));
    ResponseSnapshot kept = CaptureRule.snapshot(201, headers, new byte[] {1, 2}, 2);
    assertArrayEquals(new byte[] {1, 2}, kept.body());
    assertEquals(Optional.empty(), kept.header(ResponseSnapshot.BODY_NOT_KEPT_HEADER));

    ResponseSnapshot broken = CaptureRule.snapshot(201, headers, null, 90_000);
    assertEquals(0, broken.body().length);
    assertEquals(Optional.of("90000"), broken.header(ResponseSnapshot.BODY_NOT_KEPT_HEADER));
    assertEquals(Optional.of("application/json"), broken.header("content-type"));
    assertEquals(Optional.of("unknown"),
        CaptureRule.snapshot(500, headers, new byte[CAP + 1], -1).header(ResponseSnapshot.BODY_NOT_KEPT_HEADER),
        "over the cap is never kept");
  }
}
