package dev.idem.spring.boot.review.unserved;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A context hierarchy built the way Boot documents it ({@code new SpringApplicationBuilder(Parent.class)
 * .child(Web.class)}): a shared parent (auto-configured: the journal, the executor, the DataSource
 * live there) and a Spring MVC child that serves the requests and runs the guard.
 * {@code SpringApplicationBuilder.child} forces the parent to {@link WebApplicationType#NONE}, so
 * 79a46330's NotWebApp check fails the parent on the {@code idem.server.routes} the web child serves:
 * an app that does serve web requests, and ran its guard before the commit, no longer starts.
 *
 * <p>Expected: the hierarchy starts and the child has the guard's filter. Actual:
 * IllegalStateException "idem.server.routes [POST /orders] is set, but this is an app that serves no
 * web requests ..." from the parent.
 */
class ParentChildContextReviewTest {
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class Parent {}

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Orders.class)
  static class Web {}

  @RestController
  static class Orders {
    @PostMapping("/orders")
    @Idempotent
    String order(@RequestBody String order) {
      return "ok";
    }
  }

  @Test
  void aWebChildUnderAnAutoConfiguredParentStartsWithItsGuard() {
    Path dir = AppDatabase.withOrders("idem-parent-child-");
    SpringApplicationBuilder b = new SpringApplicationBuilder(Parent.class).properties(
        "idem.server.routes=POST /orders", "idem.client.enabled=false", "idem.outbox.enabled=false",
        "idem.directory=" + dir.resolve("idem"), "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "server.port=0", "spring.main.banner-mode=off")
        .child(Web.class).web(WebApplicationType.SERVLET);
    ConfigurableApplicationContext web = b.run();
    try {
      assertTrue(web.containsBean("idemGuardFilter"), "the web child's guard");
    } finally {
      web.close();
      ((ConfigurableApplicationContext) web.getParent()).close();
    }
  }
}
