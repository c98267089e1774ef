package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.util.ClassUtils;
import org.springframework.web.client.RestClientResponseException;
import org.springframework.web.client.RestTemplate;

/**
 * docs/spring.md: "Nothing to wire: inject Boot's builder, and the call is keyed and journaled", and
 * "Untagged POSTs are keyed by default ... the obvious Spring wiring then sent no key at all and
 * journaled nothing, silently". For RestTemplate, Boot's builder is its {@code RestTemplateBuilder}
 * bean, and Boot's reference documents {@code this.restTemplate = restTemplateBuilder.build()} in a
 * service's constructor. Such a template is not a bean, so the starter's post-processor never sees
 * it: its POSTs leave without an Idempotency-Key and unjournaled, silently, while the same app's
 * {@code RestClient.Builder} keys them.
 *
 * <p>Expected: an untagged POST through a template built from Boot's RestTemplateBuilder carries a
 * key (the untagged policy, fresh-key by default). Before the fix: no key header.
 *
 * <p>Found by a review on 2026-12-04.
 */
class RestTemplateBuilderReviewTest {
  /** Boot 3.5's and Boot 4.0's names of RestTemplateBuilder. */
  private static final List<String> BUILDER = List.of("org.springframework.boot.web.client.RestTemplateBuilder",
      "org.springframework.boot.restclient.RestTemplateBuilder");

  @Test
  void aTemplateBuiltFromBootsRestTemplateBuilderKeysUntaggedPosts(@TempDir Path dir) throws Exception {
    try (IdempotentServer server = IdempotentServer.start();
         ConfigurableApplicationContext app = new SpringApplicationBuilder(TestApp.class).properties(
             "server.port=0",
             "idem.directory=" + dir.resolve("idem"),
             "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
             "idem.server.store=datasource").run()) {
      Class<?> type = null;
      for (String name : BUILDER) {
        if (ClassUtils.isPresent(name, getClass().getClassLoader())) {
          type = ClassUtils.forName(name, getClass().getClassLoader());
        }
      }
      Object builder = app.getBean(type);
      RestTemplate template = (RestTemplate) type.getMethod("build").invoke(builder); // as a service's constructor does

      HttpHeaders headers = new HttpHeaders();
      headers.setContentType(MediaType.APPLICATION_JSON);
      try {
        template.postForEntity(server.url("/orders"), new HttpEntity<>("{\"item\":\"book\"}", headers), String.class);
      } catch (RestClientResponseException keyMissing) {
        // the reference server answers 400 to a POST without a key; the assertions below say why
      }

      assertEquals(1, server.requestCount());
      ReceivedRequest received = server.recordedRequests().get(0);
      assertTrue(received.header(IdempotentServer.DEFAULT_KEY_HEADER).isPresent(),
          "a POST through Boot's RestTemplateBuilder left without an Idempotency-Key (and unjournaled): " + received);
      assertEquals(1, server.keysSeen().size(), String.valueOf(server.keysSeen()));
    }
  }
}
