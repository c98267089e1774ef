package dev.idem.spring.boot.review.unserved;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.stereotype.Service;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring MVC app whose application.yml guards its order route ({@code idem.server.routes}), and a
 * service-layer integration test of it with {@code @SpringBootTest(webEnvironment = NONE)}: Boot's
 * usual way to test beans without a servlet container. Boot runs that test's context as a non-web
 * application, so commit 79a46330's {@code NotWebApp} check (ConditionalOnNotWebApplication) takes
 * the MVC app for a batch job and fails the context: every such test of an app that sets any
 * {@code idem.server.*} key breaks on upgrade, with a message telling the user to "run the app on
 * Spring MVC", which it is.
 *
 * <p>Expected: the context starts (the app is a Spring MVC app; this test just does not start a
 * server). Actual: IllegalStateException "idem.server.routes [POST /orders] is set, but this is an
 * app that serves no web requests ...".
 */
@SpringBootTest(classes = ServletAppNoneWebEnvironmentTestReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.NONE, properties = {
        // as the app's application.yml has them, for its Spring MVC runtime
        "idem.server.routes=POST /orders", "idem.client.enabled=false", "idem.outbox.enabled=false"})
class ServletAppNoneWebEnvironmentTestReviewTest {
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import({Orders.class, Pricing.class})
  static class App {}

  @RestController
  static class Orders {
    @PostMapping("/orders")
    @Idempotent
    String order(@RequestBody String order) {
      return "ok";
    }
  }

  @Service
  static class Pricing {
    int price(String item) {
      return item.length() * 100;
    }
  }

  @DynamicPropertySource
  static void dir(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, AppDatabase.withOrders("idem-none-webenv-"));
  }

  @Autowired
  Pricing pricing;

  @Test
  void aServiceTestOfTheMvcAppStartsWithoutAWebEnvironment() {
    assertEquals(400, pricing.price("book"));
  }
}
