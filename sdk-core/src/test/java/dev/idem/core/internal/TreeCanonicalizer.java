package dev.idem.core.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.DeserializationFeature;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The oracle for {@link JsonCanonicalizer}: its implementation before it read the parser's tokens
 * (commit b8793c7), over a Jackson tree, numbers through the decimal search without shortcuts.
 * Fingerprints are stored in journals, so the canonical bytes must not change for any input,
 * except, since a review on 2026-12-04, for a number its double's text does not hold exactly: the
 * tree reads numbers as BigDecimals to tell those, and writes them as their own value (by
 * BigDecimal arithmetic here, not by the canonicalizer's digit parsing).
 */
final class TreeCanonicalizer {
  private static final ObjectMapper MAPPER = JsonMapper.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
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
      case NUMBER -> {
        String asDouble = JsonCanonicalizer.formatNumberGeneral(node.doubleValue());
        BigDecimal exact = node.decimalValue();
        out.append(new BigDecimal(asDouble).compareTo(exact) == 0 ? asDouble : exactForm(exact));
      }
      case BOOLEAN -> out.append(node.booleanValue());
      case NULL -> out.append("null");
      default -> throw new IllegalArgumentException("unexpected JSON node " + node.getNodeType());
    }
  }

  /** ECMA-262's layout of a number's shortest digits, applied to all of a BigDecimal's. */
  private static String exactForm(BigDecimal exact) {
    BigDecimal v = exact.stripTrailingZeros();
    String digits = v.unscaledValue().abs().toString();
    int k = digits.length();
    int n = k - v.scale();
    StringBuilder sb = new StringBuilder(v.signum() < 0 ? "-" : "");
    if (k <= n && n <= 21) {
      sb.append(digits).append("0".repeat(n - k));
    } else if (0 < n && n <= 21) {
      sb.append(digits, 0, n).append('.').append(digits, n, k);
    } else if (-6 < n && n <= 0) {
      sb.append("0.").append("0".repeat(-n)).append(digits);
    } else {
      sb.append(digits.charAt(0));
      if (k > 1) {
        sb.append('.').append(digits, 1, k);
      }
      sb.append('e').append(n - 1 < 0 ? '-' : '+').append(Math.abs(n - 1));
    }
    return sb.toString();
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
