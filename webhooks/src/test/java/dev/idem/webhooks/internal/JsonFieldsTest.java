package dev.idem.webhooks.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The top-level id and type, read only as far as needed: the first string of each. */
class JsonFieldsTest {
  static JsonFields.IdAndType read(String json, boolean wantId, boolean wantType) {
    return JsonFields.read(json.getBytes(StandardCharsets.UTF_8), wantId, wantType);
  }

  @Test
  void topLevelStringsOnlyTheFirstOfEach() {
    String json = "{\"data\":{\"id\":\"inner\",\"type\":\"inner\"},\"type\":7,\"id\":\"evt_1\",\"type\":\"a.b\","
        + "\"id\":\"evt_2\",\"type\":\"c.d\"}";
    assertEquals(new JsonFields.IdAndType("evt_1", "a.b"), read(json, true, true));
  }

  @Test
  void onlyTheFieldsAskedForAreRead() {
    String json = "{\"id\":\"evt_1\",\"type\":\"a.b\"}";
    assertEquals(new JsonFields.IdAndType(null, "a.b"), read(json, false, true));
    assertEquals(new JsonFields.IdAndType("evt_1", null), read(json, true, false));
  }

  @Test
  void itStopsAtTheFieldsWantedSoATailThatIsNotJsonDoesNotMatter() {
    assertEquals(new JsonFields.IdAndType(null, "a.b"), read("{\"type\":\"a.b\",\"data\":{\"x\":", false, true));
    assertEquals(new JsonFields.IdAndType(null, "a.b"), read("{\"type\":\"a.b\",\"data\":{\"x\":", true, true),
        "cut short: what was read so far stands, as before");
    assertEquals(new JsonFields.IdAndType(null, null), read("[\"type\"]", true, true));
  }
}
