package dev.idem.spring.boot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The shared signature vectors of webhooks/src/test/resources/vectors (provenance in the README
 * beside them), read from the repository: both test modules sit beside the webhooks module.
 */
final class WebhookVectors {
  /** One vector. */
  record Vector(String scheme, String name, String secret, Map<String, String> headers, byte[] body, boolean valid) {
    /** The inbox's identity of the delivery: source and event id. */
    String eventKey() {
      return scheme + "/" + eventId();
    }

    private String eventId() {
      return switch (scheme) {
        case "standard-webhooks" -> headers.get("webhook-id");
        case "github" -> headers.get("X-GitHub-Delivery");
        default -> {
          try {
            yield new ObjectMapper().readTree(body).get("id").asText();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };
    }

    @Override
    public String toString() {
      return scheme + " '" + name + "'";
    }
  }

  private static final List<Vector> ALL = read();

  private WebhookVectors() {}

  static List<Vector> all() {
    return ALL;
  }

  /** The secret of a scheme's valid vectors: the one its endpoint is configured with. */
  static String secret(String scheme) {
    return ALL.stream().filter(v -> v.scheme().equals(scheme) && v.valid()).map(Vector::secret).findFirst()
        .orElseThrow();
  }

  /**
   * The vectors an endpoint configured with {@link #secret} can play: a "wrong secret" vector gives
   * the verifier another secret than the signer's, which one configured endpoint cannot do.
   */
  static List<Vector> playable() {
    return ALL.stream().filter(v -> v.secret().equals(secret(v.scheme()))).toList();
  }

  private static List<Vector> read() {
    Path file = Path.of("..", "webhooks", "src", "test", "resources", "vectors", "webhook-signatures.json");
    try {
      JsonNode root = new ObjectMapper().readTree(Files.readAllBytes(file));
      List<Vector> out = new ArrayList<>();
      for (JsonNode v : root.get("vectors")) {
        Map<String, String> headers = new LinkedHashMap<>();
        v.get("headers").fields().forEachRemaining(e -> headers.put(e.getKey(), e.getValue().asText()));
        out.add(new Vector(v.get("scheme").asText(), v.get("name").asText(), v.get("secret").asText(), headers,
            Base64.getDecoder().decode(v.get("body_base64").asText()), v.get("expect").asText().equals("valid")));
      }
      return List.copyOf(out);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file.toAbsolutePath(), e);
    }
  }
}
