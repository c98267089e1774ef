package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.idem.core.spi.ResponseSnapshot;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The stored response's checksum: a changed value is refused; a response stored before it existed reads as before. */
class ResponseCheckTest {
  private final RecordCodec codec = new RecordCodec(1024, "Idem-Truncated");
  private final ObjectMapper mapper = new ObjectMapper();
  private final ResponseSnapshot response = new ResponseSnapshot(201, Map.of("Location", List.of("/orders/7")),
      "{\"order\":7}".getBytes(StandardCharsets.UTF_8));

  @Test
  void aStoredResponseReadsBackWithItsChecksum() throws Exception {
    String json = codec.encodeResponse(response, Set.of());
    assertTrue(mapper.readTree(json).has(ResponseCheck.FIELD), json);
    ResponseSnapshot read = codec.decodeResponse(json);
    assertEquals(201, read.status());
    assertArrayEquals(response.body(), read.body());
  }

  @Test
  void aChangedStatusHeaderOrBodyIsRefused() throws Exception {
    String json = codec.encodeResponse(response, Set.of());
    for (String[] change : new String[][] {{"201", "200"}, {"/orders/7", "/orders/8"}, {"eyJvcmRlciI6N30=",
        "eyJvcmRlciI6OH0="}}) {
      String changed = json.replace(change[0], change[1]);
      assertTrue(!changed.equals(json), change[0]);
      CorruptRowException e = assertThrows(CorruptRowException.class, () -> codec.decodeResponse(changed));
      assertTrue(e.getMessage().contains("checksum"), e.getMessage());
    }
  }

  @Test
  void aResponseStoredBeforeTheChecksumExistedReadsAsBefore() throws Exception {
    ObjectNode old = (ObjectNode) mapper.readTree(codec.encodeResponse(response, Set.of()));
    old.remove(ResponseCheck.FIELD);
    ResponseSnapshot read = codec.decodeResponse(old.toString());
    assertArrayEquals(response.body(), read.body());
  }
}
