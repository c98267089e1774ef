package dev.idem.spring.internal;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A Spring MVC app has no WebFlux on its class path: wrapping its RestClient.Builder and
 * RestTemplate must not load a WebFlux type. Run in a class loader that has this module's class
 * path without WebFlux and Reactor (the sample app in examples failed to start with
 * {@code NoClassDefFoundError: ExchangeStrategies} before the WebClient wiring had a class of its own).
 */
class WithoutWebFluxTest {
  /** What spring-webflux and Reactor hold (spring-web's codec packages stay: an MVC app has them). */
  private static final List<String> HIDDEN = List.of("org.springframework.web.reactive.", "reactor.");

  @Test
  void theRestClientWiringLoadsNoWebFluxType() throws Exception {
    try (URLClassLoader mvcOnly = new WithoutWebFlux()) {
      assertThrows(ClassNotFoundException.class,
          () -> Class.forName("org.springframework.web.reactive.function.client.ExchangeStrategies", false, mvcOnly),
          "the loader hides WebFlux");
      Class<?> wiring = Class.forName(ClientWiring.class.getName(), true, mvcOnly);
      Class<?> restClient = Class.forName("org.springframework.web.client.RestClient", true, mvcOnly);
      Object builder = restClient.getMethod("builder").invoke(null);
      Class<?> interceptor = Class.forName("dev.idem.spring.internal.DeferredInterceptor", false, mvcOnly);
      Method wrap = wiring.getMethod("restClientBuilder", Object.class, interceptor);
      Object wrapped = wrap.invoke(null, builder, null);
      assertTrue(Class.forName("org.springframework.web.client.RestClient$Builder", false, mvcOnly).isInstance(wrapped));

    }
  }

  /** This module's test class path, WebFlux and Reactor left out; nothing from the test's own loader. */
  private static final class WithoutWebFlux extends URLClassLoader {
    WithoutWebFlux() throws Exception {
      super(classPath(), ClassLoader.getPlatformClassLoader());
    }

    private static URL[] classPath() throws Exception {
      List<URL> urls = new ArrayList<>();
      for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
        urls.add(new File(entry).toURI().toURL());
      }
      return urls.toArray(URL[]::new);
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
      if (HIDDEN.stream().anyMatch(name::startsWith)) {
        throw new ClassNotFoundException(name + " (hidden: an app without WebFlux)");
      }
      return super.findClass(name);
    }
  }
}
