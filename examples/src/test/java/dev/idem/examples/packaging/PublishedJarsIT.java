package dev.idem.examples.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What an app gets from each published module, checked on the jars this build made (failsafe runs
 * after "package", so the class path holds the library jars, not their classes directories): a
 * stable Automatic-Module-Name, and the sources and javadoc jars that Maven Central requires and
 * IDEs show.
 */
class PublishedJarsIT {
  static Stream<Arguments> libraries() {
    return Stream.of(
        Arguments.of(dev.idem.core.IdempotentExecutor.class, "dev.idem.core"),
        Arguments.of(dev.idem.okhttp.IdemOkHttp.class, "dev.idem.okhttp"),
        Arguments.of(dev.idem.httpclient.IdempotentHttpClient.class, "dev.idem.httpclient"),
        Arguments.of(dev.idem.jdbc.JdbcJournal.class, "dev.idem.jdbc"),
        Arguments.of(dev.idem.server.IdempotencyGuard.class, "dev.idem.server"),
        Arguments.of(dev.idem.webhooks.WebhookInbox.class, "dev.idem.webhooks"),
        Arguments.of(dev.idem.testkit.IdempotentServer.class, "dev.idem.testkit"),
        Arguments.of(dev.idem.cli.IdemCli.class, "dev.idem.cli"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("libraries")
  void eachLibraryJarHasAModuleNameSourcesAndJavadoc(Class<?> member, String moduleName) throws Exception {
    Path jar = Path.of(member.getProtectionDomain().getCodeSource().getLocation().toURI());
    assertTrue(Files.isRegularFile(jar) && jar.toString().endsWith(".jar"),
        member.getName() + " comes from " + jar + ", not from a packaged jar: run this through mvn verify");
    try (JarFile j = new JarFile(jar.toFile())) {
      assertEquals(moduleName, j.getManifest().getMainAttributes().getValue("Automatic-Module-Name"), jar.toString());
    }
    String base = jar.getFileName().toString().replaceFirst("\\.jar$", "");
    Path sources = jar.resolveSibling(base + "-sources.jar");
    Path javadoc = jar.resolveSibling(base + "-javadoc.jar");
    assertTrue(Files.isRegularFile(sources), "missing " + sources);
    assertTrue(Files.isRegularFile(javadoc), "missing " + javadoc);
    String source = member.getName().replace('.', '/') + ".java";
    String page = member.getName().replace('.', '/') + ".html";
    try (JarFile s = new JarFile(sources.toFile()); JarFile d = new JarFile(javadoc.toFile())) {
      assertTrue(s.getEntry(source) != null, sources + " holds " + source);
      assertTrue(d.getEntry(page) != null, javadoc + " holds " + page);
    }
  }
}
