package dev.idem.examples.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The BOM must manage every module this build publishes, and only those, or an app that imports it
 * gets an unversioned artifact (a build error) or a version mix. A module is published unless its
 * POM sets maven.deploy.skip. It also manages the JDBC drivers the docs tell an app to add, and no
 * other third-party artifact: whatever it manages lands in the app's build.
 */
class BomTest {
  /**
   * The third-party artifacts the BOM manages: the JDBC drivers an app adds itself (README,
   * "Optional dependencies"; docs/server.md), at the versions Idem is tested with.
   */
  static final Set<String> MANAGED_DRIVERS = Set.of("org.xerial:sqlite-jdbc", "org.postgresql:postgresql",
      "com.h2database:h2");

  /** A {@code <dependency>} element of a Markdown file, as a user would paste it. */
  private static final Pattern DEPENDENCY = Pattern.compile("<dependency>(.*?)</dependency>", Pattern.DOTALL);

  @Test
  void theBomManagesExactlyThePublishedModulesAndImportsOkHttpBom() throws Exception {
    Path root = repoRoot();
    Document parent = parse(root.resolve("pom.xml"));
    Set<String> published = new TreeSet<>();
    for (String module : texts(child(parent.getDocumentElement(), "modules"), "module")) {
      Document pom = parse(root.resolve(module).resolve("pom.xml"));
      Element props = child(pom.getDocumentElement(), "properties");
      boolean skipped = props != null && texts(props, "maven.deploy.skip").contains("true");
      String packaging = text(pom.getDocumentElement(), "packaging");
      if (!skipped && !"pom".equals(packaging)) {
        published.add(text(pom.getDocumentElement(), "artifactId"));
      }
    }
    assertTrue(published.contains("idem-sdk-core") && !published.contains("idem-examples"), published.toString());

    Document bom = parse(root.resolve("bom/pom.xml"));
    Set<String> managed = new TreeSet<>();
    boolean importsOkHttp = false;
    Element deps = child(child(bom.getDocumentElement(), "dependencyManagement"), "dependencies");
    for (Element d : children(deps, "dependency")) {
      String group = text(d, "groupId");
      if (group.equals("dev.idem")) {
        assertEquals("${project.version}", text(d, "version"), text(d, "artifactId"));
        managed.add(text(d, "artifactId"));
      } else if (group.equals("com.squareup.okhttp3") && text(d, "artifactId").equals("okhttp-bom")) {
        importsOkHttp = "import".equals(text(d, "scope"));
      }
    }
    assertEquals(published, managed);
    assertTrue(importsOkHttp, "the BOM imports okhttp-bom, so that Retrofit 3 runs on OkHttp 5");
    // Anything else in the BOM would pin a third-party version in the app's build.
    assertEquals(MANAGED_DRIVERS, thirdParty(bom));
    assertEquals(managed.size() + 1 + MANAGED_DRIVERS.size(), children(deps, "dependency").size());
  }

  /**
   * A snippet that asks the user to add a dependency without a version builds only if the BOM
   * manages it: "'dependencies.dependency.version' for org.xerial:sqlite-jdbc:jar is missing" was
   * what docs/server.md's quickstart gave.
   */
  @Test
  void everyDependencyADocAsksForWithoutAVersionIsManagedByTheBom() throws Exception {
    Path root = repoRoot();
    Set<String> managed = new TreeSet<>(thirdParty(parse(root.resolve("bom/pom.xml"))));
    Element deps = child(child(parse(root.resolve("bom/pom.xml")).getDocumentElement(), "dependencyManagement"),
        "dependencies");
    for (Element d : children(deps, "dependency")) {
      managed.add(text(d, "groupId") + ":" + text(d, "artifactId"));
    }
    List<Path> docs = new ArrayList<>(List.of(root.resolve("README.md")));
    try (Stream<Path> files = Files.list(root.resolve("docs"))) {
      files.filter(f -> f.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    List<String> unmanaged = new ArrayList<>();
    int unversioned = 0;
    for (Path doc : docs) {
      Matcher m = DEPENDENCY.matcher(Files.readString(doc));
      while (m.find()) {
        String xml = m.group(1);
        if (xml.contains("<version>")) {
          continue;
        }
        unversioned++;
        String coordinates = tag(xml, "groupId") + ":" + tag(xml, "artifactId");
        if (!managed.contains(coordinates)) {
          unmanaged.add(root.relativize(doc) + ": " + coordinates);
        }
      }
    }
    assertTrue(unversioned > 3, "found only " + unversioned + " unversioned dependencies in " + docs);
    assertEquals(List.of(), unmanaged, "add a <version> to the snippet, or manage the artifact in bom/pom.xml");
  }

  /** The BOM's managed artifacts that are neither Idem's nor the imported okhttp-bom. */
  private static Set<String> thirdParty(Document bom) {
    Set<String> out = new TreeSet<>();
    Element deps = child(child(bom.getDocumentElement(), "dependencyManagement"), "dependencies");
    for (Element d : children(deps, "dependency")) {
      if (!text(d, "groupId").equals("dev.idem") && !"import".equals(text(d, "scope"))) {
        out.add(text(d, "groupId") + ":" + text(d, "artifactId"));
      }
    }
    return out;
  }

  private static String tag(String xml, String name) {
    Matcher m = Pattern.compile("<" + name + ">\\s*([^<\\s]+)\\s*</" + name + ">").matcher(xml);
    return m.find() ? m.group(1) : "(no " + name + ")";
  }

  static Path repoRoot() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("bom/pom.xml"))) {
        return p;
      }
    }
    throw new IllegalStateException("no bom/pom.xml above " + Path.of("").toAbsolutePath());
  }

  private static Document parse(Path pom) throws Exception {
    return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
  }

  private static List<Element> children(Element parent, String name) {
    List<Element> result = new ArrayList<>();
    if (parent == null) {
      return result;
    }
    NodeList nodes = parent.getChildNodes();
    for (int i = 0; i < nodes.getLength(); i++) {
      Node n = nodes.item(i);
      if (n instanceof Element e && e.getTagName().equals(name)) {
        result.add(e);
      }
    }
    return result;
  }

  private static Element child(Element parent, String name) {
    List<Element> c = children(parent, name);
    return c.isEmpty() ? null : c.get(0);
  }

  private static String text(Element parent, String name) {
    Element c = child(parent, name);
    return c == null ? null : c.getTextContent().trim();
  }

  private static List<String> texts(Element parent, String name) {
    return children(parent, name).stream().map(e -> e.getTextContent().trim()).toList();
  }
}
