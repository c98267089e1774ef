package dev.idem.webhooks.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * Reads the top-level {@code "id"} and {@code "type"} strings of a verified JSON body with a
 * streaming parser, skipping everything else, so nothing of the body is kept but two strings. It
 * stops at the first string of each field it is asked for: the rest of the body cannot change what
 * it returns, and is not tokenized on the request thread.
 */
public final class JsonFields {
  private static final JsonFactory FACTORY = new JsonFactory();

  /** @param id the top-level "id", or null; @param type the top-level "type", or null */
  public record IdAndType(String id, String type) {
  }

  private JsonFields() {}

  /**
   * Never throws: a body that is not a JSON object yields nulls.
   *
   * @param wantId whether to look for the id; when false, the id returned is null
   * @param wantType whether to look for the type; when false, the type returned is null
   */
  public static IdAndType read(byte[] body, boolean wantId, boolean wantType) {
    String id = null;
    String type = null;
    try (JsonParser p = FACTORY.createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return new IdAndType(null, null);
      }
      while ((wantId && id == null || wantType && type == null) && p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken value = p.nextToken();
        if (value == JsonToken.VALUE_STRING && wantId && "id".equals(name) && id == null) {
          id = p.getText();
        } else if (value == JsonToken.VALUE_STRING && wantType && "type".equals(name) && type == null) {
          type = p.getText();
        } else {
          p.skipChildren();
        }
      }
    } catch (IOException | RuntimeException e) {
      // not JSON, or cut short: what was read so far stands
    }
    return new IdAndType(id, type);
  }
}
