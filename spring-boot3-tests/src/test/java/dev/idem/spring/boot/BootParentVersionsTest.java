package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildProcesses;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An app under a Spring Boot parent (this module's Boot line) that depends on the starter gets
 * the sqlite-jdbc and jackson-databind versions Boot manages, not Idem's, unless it sets the
 * properties docs/spring.md names; with them it gets Idem's. Resolved by Maven itself: a small
 * project generated here, with the starter's and Idem's POMs from this checkout, third-party POMs
 * read from the local repository as a file repository, and {@code dependency:tree}. Nothing is
 * installed into the local repository.
 */
class BootParentVersionsTest {
  private static final String IDEM_VERSION = "0.1.0-SNAPSHOT";
  private static final List<String> IDEM_MODULES = List.of(".", "bom", "sdk-core", "persistence", "server", "webhooks",
      "spring-boot-starter");

  @Test
  void theDocumentedPropertiesKeepIdemsVersionsUnderTheBootParent(@TempDir Path dir) throws Exception {
    String boot = property("idem.boot.version");
    String sqlite = property("idem.sqlite.version");
    String jackson = property("idem.jackson.version");
    // What docs/spring.md tells a Boot-parent app to set; Boot 4 keeps Jackson 2 under another property.
    String jacksonProperty = boot.startsWith("3.") ? "jackson-bom.version" : "jackson-2-bom.version";
    Path root = Path.of("..").toAbsolutePath().normalize();
    Path local = dir.resolve("local");
    for (String module : IDEM_MODULES) {
      installPom(root.resolve(module).resolve("pom.xml"), local);
    }
    Files.writeString(dir.resolve("settings.xml"), settings(Path.of(System.getProperty("user.home"), ".m2",
        "repository")));
    Files.writeString(dir.resolve("pom.xml"), """
        <project xmlns="http://maven.apache.org/POM/4.0.0">
          <modelVersion>4.0.0</modelVersion>
          <groupId>example</groupId><artifactId>apps</artifactId><version>1</version><packaging>pom</packaging>
          <modules><module>plain</module><module>fixed</module></modules>
        </project>
        """);
    app(dir.resolve("plain"), "plain", boot, Map.of());
    app(dir.resolve("fixed"), "fixed", boot, Map.of("sqlite-jdbc.version", sqlite, jacksonProperty, jackson));

    try (ChildProcesses children = new ChildProcesses()) { // an mvn that does not finish is not left running
      Process p = children.add(new ProcessBuilder("mvn", "-B", "-q", "-s", dir.resolve("settings.xml").toString(),
          "-Dmaven.repo.local=" + local, "org.apache.maven.plugins:maven-dependency-plugin:"
          + property("idem.dependency-plugin.version") + ":tree", "-DoutputFile=tree.txt")
          .directory(dir.toFile()).redirectErrorStream(true).redirectOutput(dir.resolve("mvn.log").toFile()).start());
      assertTrue(p.waitFor(4, TimeUnit.MINUTES), "mvn did not finish");
      assertEquals(0, p.exitValue(), Files.readString(dir.resolve("mvn.log")));
    }

    String plain = Files.readString(dir.resolve("plain/tree.txt"));
    String fixed = Files.readString(dir.resolve("fixed/tree.txt"));
    assertNotEquals(sqlite, version(plain, "org.xerial:sqlite-jdbc"),
        "Boot " + boot + " no longer pulls sqlite-jdbc down; update docs/spring.md\n" + plain);
    assertNotEquals(jackson, version(plain, "com.fasterxml.jackson.core:jackson-databind"),
        "Boot " + boot + " no longer pulls jackson-databind down; update docs/spring.md\n" + plain);
    assertEquals(sqlite, version(fixed, "org.xerial:sqlite-jdbc"), fixed);
    assertEquals(jackson, version(fixed, "com.fasterxml.jackson.core:jackson-databind"), fixed);
  }

  private static void app(Path dir, String name, String boot, Map<String, String> properties) throws IOException {
    Files.createDirectories(dir);
    StringBuilder props = new StringBuilder();
    properties.forEach((k, v) -> props.append("<").append(k).append(">").append(v).append("</").append(k).append(">"));
    Files.writeString(dir.resolve("pom.xml"), """
        <project xmlns="http://maven.apache.org/POM/4.0.0">
          <modelVersion>4.0.0</modelVersion>
          <parent>
            <groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-parent</artifactId>
            <version>%s</version><relativePath/>
          </parent>
          <groupId>example</groupId><artifactId>%s</artifactId><version>1</version>
          <properties>%s</properties>
          <dependencyManagement><dependencies><dependency>
            <groupId>dev.idem</groupId><artifactId>idem-bom</artifactId><version>%s</version>
            <type>pom</type><scope>import</scope>
          </dependency></dependencies></dependencyManagement>
          <dependencies><dependency>
            <groupId>dev.idem</groupId><artifactId>idem-spring-boot-starter</artifactId>
          </dependency></dependencies>
        </project>
        """.formatted(boot, name, props, IDEM_VERSION));
  }

  /** Puts a POM of this checkout into the generated build's own local repository, as an install would. */
  private static void installPom(Path pom, Path local) throws IOException {
    String xml = Files.readString(pom);
    // The artifactId that follows the parent block (or the first one, for the BOM).
    String body = xml.contains("</parent>") ? xml.substring(xml.indexOf("</parent>")) : xml;
    Matcher m = Pattern.compile("<artifactId>([^<]+)</artifactId>").matcher(body);
    assertTrue(m.find(), pom.toString());
    String artifact = m.group(1);
    Path target = local.resolve("dev/idem").resolve(artifact).resolve(IDEM_VERSION)
        .resolve(artifact + "-" + IDEM_VERSION + ".pom");
    Files.createDirectories(target.getParent());
    Files.copy(pom, target);
  }

  private static String settings(Path userRepository) {
    String url = userRepository.toUri().toString();
    return """
        <settings>
          <profiles><profile><id>user-repository</id>
            <repositories><repository><id>user-repository</id><url>%1$s</url>
              <releases><enabled>true</enabled><checksumPolicy>ignore</checksumPolicy></releases>
              <snapshots><enabled>false</enabled></snapshots></repository></repositories>
            <pluginRepositories><pluginRepository><id>user-repository</id><url>%1$s</url>
              <releases><enabled>true</enabled><checksumPolicy>ignore</checksumPolicy></releases>
              <snapshots><enabled>false</enabled></snapshots></pluginRepository></pluginRepositories>
          </profile></profiles>
          <activeProfiles><activeProfile>user-repository</activeProfile></activeProfiles>
        </settings>
        """.formatted(url);
  }

  private static String version(String tree, String groupAndArtifact) {
    Matcher m = Pattern.compile(Pattern.quote(groupAndArtifact) + ":jar:([^:\\s]+)").matcher(tree);
    assertTrue(m.find(), groupAndArtifact + " not in the tree:\n" + tree);
    return m.group(1);
  }

  private static String property(String name) {
    String v = System.getProperty(name);
    assertTrue(v != null && !v.isBlank() && !v.startsWith("${"), name + " is not set (the POM's surefire settings)");
    return v;
  }
}
