package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The IDE's view of {@code idem.client.deadline}: docs/spring.md's table and the property's own
 * description give it a default of 60 s, but the record component has no {@code @DefaultValue}
 * (it is null, and the executor's builder fills in 60 s), so the configuration metadata the starter
 * ships has no {@code defaultValue} for it: the IDE's completion shows the property without a
 * default, as if operations had no deadline unless one is set, unlike every other property with a
 * fixed default ({@code max-attempts} 3, {@code server-key-retention} 24h...).
 *
 * <p>Expected: {@code "defaultValue": "60s"} in {@code META-INF/spring-configuration-metadata.json}
 * (for instance {@code @DefaultValue("60s") Duration deadline}). Actual: none.
 */
class ConfigurationMetadataDefaultsReviewTest {
  @Test
  void theDeadlinesDocumentedDefaultIsInTheConfigurationMetadata() throws Exception {
    String json;
    try (InputStream in = getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
      assertNotNull(in, "no configuration metadata on the class path");
      json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    Matcher m = Pattern.compile("\\{[^{}]*\"name\"\\s*:\\s*\"idem\\.client\\.deadline\"[^{}]*}").matcher(json);
    assertTrue(m.find(), "idem.client.deadline is not in the metadata");
    String entry = m.group();
    assertTrue(entry.contains("60 s by default"), "the description no longer says 60 s: " + entry);
    assertTrue(entry.matches("(?s).*\"defaultValue\"\\s*:\\s*\"60s\".*"),
        "the IDE metadata of idem.client.deadline has no default, though it is 60 s: " + entry);
  }
}
