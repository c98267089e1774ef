package dev.idem.core.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The oracle for {@link JsonCanonicalizer}: its implementation before it read the parser's tokens
 * (commit b8793c7), over a Jackson tree, numbers through the decimal search without shortcuts.
 * Fingerprints are stored in journals, so the canonical bytes must not change for any input.
 */
final class TreeCanonicalizer {
  private static final ObjectMapper MAPPER = JsonMapper.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build();
  private static final String ESCAPED = "\"\\\b\f\n\r\t";

  private TreeCanonicalizer() {}

  static Optional<byte[]> canonicalize(byte[] json) {
    try (JsonParser parser = MAPPER.createParser(json)) {
      JsonNode node = MAPPER.readTree(parser);
      if (node == null || parser.nextToken() != null) {
        return Optional.empty();
      }
      StringBuilder out = new StringBuilder(json.length);
      write(node, out);
      return Optional.of(out.toString().getBytes(StandardCharsets.UTF_8));
    } catch (IOException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static void write(JsonNode node, StringBuilder out) {
    switch (node.getNodeType()) {
      case OBJECT -> {
        List<Map.Entry<String, JsonNode>> fields = new ArrayList<>(node.properties());
        fields.sort(Map.Entry.comparingByKey());
        out.append('{');
        for (int i = 0; i < fields.size(); i++) {
          if (i > 0) {
            out.append(',');
          }
          writeString(fields.get(i).getKey(), out);
          out.append(':');
          write(fields.get(i).getValue(), out);
        }
        out.append('}');
      }
      case ARRAY -> {
        out.append('[');
        for (int i = 0; i < node.size(); i++) {
          if (i > 0) {
            out.append(',');
          }
          write(node.get(i), out);
        }
        out.append(']');
      }
      case STRING -> writeString(node.textValue(), out);
      case NUMBER -> out.append(JsonCanonicalizer.formatNumberGeneral(node.doubleValue()));
      case BOOLEAN -> out.append(node.booleanValue());
      case NULL -> out.append("null");
      default -> throw new IllegalArgumentException("unexpected JSON node " + node.getNodeType());
    }
  }

  private static void writeString(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isSurrogate(c)) {
        boolean paired = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        if (!paired) {
          throw new IllegalArgumentException("lone surrogate in JSON string");
        }
        out.append(c).append(s.charAt(++i));
        continue;
      }
      int escaped = ESCAPED.indexOf(c);
      if (escaped >= 0) {
        out.append('\\').append(JsonCanonicalizer.SHORT_ESCAPES.charAt(escaped));
      } else if (c < 0x20) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    out.append('"');
  }
}
