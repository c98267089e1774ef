package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The 27 vectors made with each scheme's reference library (standardwebhooks, stripe,
 * @octokit/webhooks-methods), read from this module's test resources (their provenance:
 * src/test/resources/vectors/README.md): valid ones verify, invalid ones are rejected with the
 * vector's reason category.
 */
class SignatureVectorsTest {
  /** On the test class path, so that a clone of the repository needs nothing beside it. */
  static final String VECTORS = "/vectors/webhook-signatures.json";

  private static JsonNode file() throws IOException {
    try (InputStream in = SignatureVectorsTest.class.getResourceAsStream(VECTORS)) {
      if (in == null) {
        throw new IllegalStateException(VECTORS + " is not on the test class path (webhooks/src/test/resources)");
      }
      return new ObjectMapper().readTree(in);
    }
  }

  static Stream<Arguments> vectors() throws IOException {
    List<Arguments> out = new ArrayList<>();
    for (JsonNode v : file().get("vectors")) {
      out.add(Arguments.of(v.get("scheme").asText() + ": " + v.get("name").asText(), v));
    }
    return out.stream();
  }

  @Test
  void theFileHas27VectorsAndTheDefaultToleranceMatchesIt() throws IOException {
    JsonNode f = file();
    assertEquals(27, f.get("vectors").size());
    assertEquals(f.get("tolerance_seconds").asLong(), WebhookSource.builder("x", SignatureScheme.github()).secret("s")
        .build().tolerance().getSeconds());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void vector(String name, JsonNode v) throws Exception {
    SignatureScheme scheme = switch (v.get("scheme").asText()) {
      case "standard-webhooks" -> SignatureScheme.standardWebhooks();
      case "stripe" -> SignatureScheme.stripe();
      case "github" -> SignatureScheme.github();
      default -> throw new IllegalArgumentException(v.get("scheme").asText());
    };
    WebhookSource source = WebhookSource.builder("vectors", scheme)
        .secret(v.get("secret").asText())
        .clock(Clock.fixed(Instant.ofEpochSecond(v.get("now").asLong()), ZoneOffset.UTC))
        .build();
    Map<String, List<String>> headers = new TreeMap<>();
    v.get("headers").properties().forEach(e -> headers.put(e.getKey(), List.of(e.getValue().asText())));
    byte[] body = Base64.getDecoder().decode(v.get("body_base64").asText());

    if (v.get("expect").asText().equals("valid")) {
      VerifiedWebhook w = source.verify(headers, body);
      assertEquals(body.length, w.body().length);
    } else {
      WebhookRejectedException e = assertThrows(WebhookRejectedException.class, () -> source.verify(headers, body));
      assertEquals(v.get("reason").asText(), e.reason().name().toLowerCase(Locale.ROOT).replace('_', '-'),
          e.getMessage());
    }
  }
}
