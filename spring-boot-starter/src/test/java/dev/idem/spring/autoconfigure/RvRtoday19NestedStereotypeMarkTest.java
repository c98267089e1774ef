package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.spring.server.Idempotent;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

/**
 * Review of c461ccf8 (a class mark judged with every class that carries it "from the same place"):
 * {@code IdempotentPlacement.markSource} takes, for a mark carried through a stereotype, the ROOT
 * annotation written on the class ({@code mark.getRoot().getType()}), not the annotation that declares
 * {@code @Idempotent}. With a stereotype nested two levels (an app's {@code @GuardedApi} =
 * {@code @RestController @Idempotent}, and {@code @AdminApi} built on {@code @GuardedApi}), the same
 * mark (the {@code @Idempotent} on {@code @GuardedApi}, which the guard reads for both by find
 * semantics) is split into two groups, {@code GuardedApi} and {@code AdminApi}. A read-only
 * controller in one group is then refused although a controller in the other carries the very same
 * mark and takes POST: the app fails to start (it started before c461ccf8: ab5eca10 kept every mark
 * not declared on the class), naming a controller that cannot drop the mark without dropping
 * {@code @GuardedApi} (its {@code @RestController} too) or unguarding the write controller, the
 * case the "shared mark is kept" rule exists for. docs/spring.md says such a mark "is refused so only
 * when no controller carrying it takes an unsafe method: shared with one that does, it guards that
 * one's writes and is kept". The class-hierarchy analogue (a mark on a base class two levels up) is
 * grouped by the declaring class and kept; the annotation nesting is not.
 */
class RvRtoday19NestedStereotypeMarkTest {
  private static final AutoConfigurations IDEM = AutoConfigurations.of(IdemAutoConfiguration.class,
      IdemClientAutoConfiguration.class, IdemServerAutoConfiguration.class, IdemWebhooksAutoConfiguration.class);

  private final WebApplicationContextRunner mvc = new WebApplicationContextRunner()
      .withConfiguration(IDEM).withUserConfiguration(Mvc.class).withPropertyValues("idem.outbox.enabled=false");

  @Configuration(proxyBeanMethods = false)
  @EnableWebMvc
  static class Mvc {}

  /** The app's stereotype of its API controllers: every one of them guarded. */
  @Target(ElementType.TYPE)
  @Retention(RetentionPolicy.RUNTIME)
  @RestController
  @Idempotent
  @interface GuardedApi {}

  /** A stereotype built on it (an admin area): the same mark, two levels down. */
  @Target(ElementType.TYPE)
  @Retention(RetentionPolicy.RUNTIME)
  @GuardedApi
  @interface AdminApi {}

  /** Write controller through the nested stereotype: its POST is guarded by @GuardedApi's mark. */
  @AdminApi
  static class AdminRefunds {
    @PostMapping("/rv19-admin-refunds")
    String refund() {
      return "refunded";
    }
  }

  /** Read-only controller through the inner stereotype: shares @GuardedApi's mark with AdminRefunds. */
  @GuardedApi
  static class Catalog {
    @GetMapping("/rv19-catalog")
    String list() {
      return "catalog";
    }
  }

  /** Write controller through the inner stereotype. */
  @GuardedApi
  static class Orders {
    @PostMapping("/rv19-orders")
    String create() {
      return "order";
    }
  }

  /** Read-only controller through the nested stereotype: shares @GuardedApi's mark with Orders. */
  @AdminApi
  static class AdminReport {
    @GetMapping("/rv19-admin-report")
    String report() {
      return "report";
    }
  }

  @Test
  void aReadOnlyControllerSharingTheMarkWithANestedStereotypesWriterStarts(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(AdminRefunds.class).withBean(Catalog.class)
        .run(context -> assertNull(context.getStartupFailure(), () -> "@GuardedApi's @Idempotent guards"
            + " AdminRefunds' POST (carried through @AdminApi), and Catalog shares that mark, yet the app was refused:"
            + " markSource groups AdminRefunds under @AdminApi (the root annotation), apart from @GuardedApi: "
            + messages(context.getStartupFailure())));
  }

  @Test
  void aNestedStereotypesReadOnlyControllerSharingTheMarkWithAWriterStarts(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(Orders.class).withBean(AdminReport.class)
        .run(context -> assertNull(context.getStartupFailure(), () -> "AdminReport carries @GuardedApi's"
            + " @Idempotent (through @AdminApi), the mark that guards Orders' POST, yet the app was refused:"
            + " markSource groups AdminReport under @AdminApi (the root annotation), apart from @GuardedApi: "
            + messages(context.getStartupFailure())));
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
