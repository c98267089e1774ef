package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

/**
 * Review of 43e5acea + ab5eca10 (a class mark that guards nothing fails the startup; only a mark
 * declared on the class itself): ab5eca10 keeps every mark that is not a direct
 * {@code @Idempotent} on the class ({@code IdempotentPlacement.refuseMisplaced}:
 * {@code marked.type().getDeclaredAnnotation(Idempotent.class) != null}), on the reasoning that a
 * mark inherited from a base class or a stereotype "guards the others' writes". But the check
 * never looks at whether any other class carries it: a composed annotation (here
 * {@code @IdempotentNoKey}, a plain {@code @Idempotent(keyRequired = false)} with a name of the
 * app's, written on the class like the annotation itself) or a marked base class used only by
 * GET controllers guards no request anywhere in the app, and the app starts silently, its authors
 * believing the controller guarded: exactly the hole 43e5acea set out to close. 43e5acea (find
 * semantics) refused both; after ab5eca10 both start. A mark that guards the writes of some class
 * that carries it (RvRtoday16InheritedClassMarkTest) must keep starting; one that guards no handler
 * of any class carrying it should be refused, naming the class, as a direct mark is.
 */
class RvRtoday18UnsharedComposedMarkTest {
  private static final AutoConfigurations IDEM = AutoConfigurations.of(IdemAutoConfiguration.class,
      IdemClientAutoConfiguration.class, IdemServerAutoConfiguration.class, IdemWebhooksAutoConfiguration.class);

  private final WebApplicationContextRunner mvc = new WebApplicationContextRunner()
      .withConfiguration(IDEM).withUserConfiguration(Mvc.class).withPropertyValues("idem.outbox.enabled=false");

  @Configuration(proxyBeanMethods = false)
  @EnableWebMvc
  static class Mvc {}

  /** The app's own name for {@code @Idempotent(keyRequired = false)}: written on a class, it is that class's mark. */
  @Target({ElementType.TYPE, ElementType.METHOD})
  @Retention(RetentionPolicy.RUNTIME)
  @Idempotent(keyRequired = false)
  @interface IdempotentNoKey {}

  /** Its only use in the app: a controller whose handlers all take GET. */
  @RestController
  @IdempotentNoKey
  static class ComposedReadOnlyPrices {
    @GetMapping("/rv18-composed-prices")
    String list() {
      return "prices";
    }
  }

  /** A marked base class that only read-only controllers extend. */
  @Idempotent
  abstract static class ReadApi {}

  @RestController
  static class BaseReadOnlyPrices extends ReadApi {
    @GetMapping("/rv18-base-prices")
    String list() {
      return "prices";
    }
  }

  @Test
  void aComposedMarkUsedOnlyOnASafeOnlyControllerIsRefused(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(ComposedReadOnlyPrices.class).run(context -> {
      Throwable failure = context.getStartupFailure();
      assertNotNull(failure, "@IdempotentNoKey (a composed @Idempotent) written on a controller whose only handler"
          + " takes GET guards nothing, and no other class carries it, yet the app started silently: ab5eca10"
          + " keeps every mark that is not a direct @Idempotent (getDeclaredAnnotation)");
      String m = messages(failure);
      assertTrue(m.contains(ComposedReadOnlyPrices.class.getName()) && m.contains("guards nothing"), m);
    });
  }

  @Test
  void aBaseClassMarkThatOnlySafeOnlyControllersInheritIsRefused(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(BaseReadOnlyPrices.class).run(context -> {
      Throwable failure = context.getStartupFailure();
      assertNotNull(failure, "the @Idempotent on ReadApi, which only a controller whose only handler takes GET"
          + " extends, guards no request in the app, yet the app started silently (ab5eca10: an inherited mark is"
          + " never refused, though here it guards no other class's writes)");
      String m = messages(failure);
      assertTrue(m.contains(BaseReadOnlyPrices.class.getName()) || m.contains(ReadApi.class.getName()), m);
    });
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
