package dev.idem.examples.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The BOM must manage every module this build publishes, and only those, or an app that imports it
 * gets an unversioned artifact (a build error) or a version mix. A module is published unless its
 * POM sets maven.deploy.skip.
 */
class BomTest {
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
    assertEquals(managed.size() + 1, children(deps, "dependency").size());
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
