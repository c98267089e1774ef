import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.OutputKeys;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.transform.stream.StreamResult;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/**
 * Turns README.md into a separate Maven project, the way a new user would copy it: the install
 * section's XML becomes the project's dependencies, and each quickstart block marked
 * {@code <!-- packaging-test: run -->} becomes a program. Run by .ci/packaging-test with Java's
 * single-file launcher; the rules are in docs/readme-issue-17p.md ("The packaging test").
 *
 * <pre>
 * java ReadmeProject.java generate README.md ROOT_POM TEMPLATE_DIR OUT_DIR IDEM_REPOSITORY_URL
 * java ReadmeProject.java explain OUT_DIR &lt; maven.log   (javac's errors, with the README line)
 * </pre>
 *
 * Any README problem exits with status 3 and a message naming the README line.
 */
public class ReadmeProject {
  static final Pattern MARKER = Pattern.compile("^<!--\\s*packaging-test:\\s*(\\S+)(.*?)-->\\s*$");
  static final Pattern GIVEN = Pattern.compile("^\\s*given=([A-Za-z0-9_,]+)\\s*$");
  static final Pattern GIVEN_METHOD = Pattern.compile("public static \\S+ ([A-Za-z_][A-Za-z0-9_]*)\\(\\)");
  static final Pattern PROPERTY = Pattern.compile("@([A-Za-z0-9_.-]+)@");

  public static void main(String[] args) throws Exception {
    try {
      if (args.length == 6 && args[0].equals("generate")) {
        generate(Path.of(args[1]), Path.of(args[2]), Path.of(args[3]), Path.of(args[4]), args[5]);
      } else if (args.length == 2 && args[0].equals("explain")) {
        explain(Path.of(args[1]));
      } else {
        System.err.println("usage: generate README ROOT_POM TEMPLATE_DIR OUT_DIR REPO_URL | explain OUT_DIR < log");
        System.exit(2);
      }
    } catch (ReadmeException e) {
      System.err.println("packaging-test: " + e.getMessage());
      System.exit(3);
    }
  }

  /** A fault of the README (or of a marker in it), reported with its line. */
  static final class ReadmeException extends Exception {
    ReadmeException(String message) {
      super(message);
    }
  }

  /** A fenced block: its language, the nearest heading, the marker before it, its code lines. */
  record Fence(String lang, String heading, int firstLine, List<String> lines, Marker marker) {}

  /** {@code <!-- packaging-test: KIND ARGS -->} on the last non-blank line before a fence. */
  record Marker(int line, String kind, String args) {}

  static List<Fence> fences(List<String> md) throws ReadmeException {
    List<Fence> fences = new ArrayList<>();
    String heading = "(before any heading)";
    Marker pending = null;
    for (int i = 0; i < md.size(); i++) {
      String line = md.get(i);
      String trimmed = line.strip();
      if (trimmed.startsWith("```")) {
        String lang = trimmed.substring(3).strip();
        int first = i + 2;
        List<String> code = new ArrayList<>();
        int j = i + 1;
        while (j < md.size() && !md.get(j).strip().equals("```")) {
          code.add(md.get(j));
          j++;
        }
        if (j == md.size()) {
          throw new ReadmeException("README.md line " + (i + 1) + ": fence ```" + lang + " is never closed");
        }
        fences.add(new Fence(lang, heading, first, code, pending));
        pending = null;
        i = j;
        continue;
      }
      Matcher m = MARKER.matcher(trimmed);
      if (m.matches()) {
        if (pending != null) {
          throw new ReadmeException("README.md line " + pending.line() + ": packaging-test marker is not followed by a code block");
        }
        pending = new Marker(i + 1, m.group(1), m.group(2).strip());
      } else if (!trimmed.isEmpty()) {
        if (pending != null) {
          throw new ReadmeException("README.md line " + pending.line()
              + ": a packaging-test marker must come just before its ```java block (only blank lines between)");
        }
        if (line.startsWith("#")) {
          heading = line.replaceFirst("^#+\\s*", "").strip();
        }
      }
    }
    if (pending != null) {
      throw new ReadmeException("README.md line " + pending.line() + ": packaging-test marker is not followed by a code block");
    }
    return fences;
  }

  static void generate(Path readme, Path rootPom, Path template, Path out, String repoUrl) throws Exception {
    List<Fence> fences = fences(Files.readAllLines(readme, StandardCharsets.UTF_8));
    Map<String, String> properties = rootProperties(rootPom);

    // 1. The install section's XML, as written.
    List<Fence> install = fences.stream()
        .filter(f -> f.lang().equals("xml") && f.heading().startsWith("Install")).collect(Collectors.toList());
    if (install.isEmpty()) {
      throw new ReadmeException("README.md: no ```xml block under a heading starting with \"Install\"");
    }
    String pom = Files.readString(template.resolve("pom.xml"), StandardCharsets.UTF_8)
        .replace("<!-- @README_INSTALL@ -->", "<!-- README_INSTALL -->")
        .replace("@IDEM_REPOSITORY_URL@", "IDEM_REPOSITORY_URL");
    pom = substituteProperties(pom, properties)
        .replace("<!-- README_INSTALL -->", installXml(install, properties))
        .replace("IDEM_REPOSITORY_URL", repoUrl);

    // 2. The quickstarts.
    Set<String> givens = givens(template.resolve("src/main/java/readme/Given.java"));
    List<String> index = new ArrayList<>();
    StringBuilder skipped = new StringBuilder();
    int n = 0;
    for (Fence f : fences) {
      boolean quickstart = f.heading().startsWith("Quickstart");
      if (f.marker() == null) {
        if (quickstart && f.lang().equals("java")) {
          throw new ReadmeException("README.md line " + (f.firstLine() - 1) + " (" + f.heading() + "): a java block under a"
              + " Quickstart heading needs <!-- packaging-test: run --> (or <!-- packaging-test: skip REASON -->) on the line before it");
        }
        continue;
      }
      if (!f.lang().equals("java")) {
        throw new ReadmeException("README.md line " + f.marker().line() + ": packaging-test marks a ```" + f.lang() + " block; only java blocks run");
      }
      switch (f.marker().kind()) {
        case "skip" -> {
          if (f.marker().args().isEmpty()) {
            throw new ReadmeException("README.md line " + f.marker().line() + ": packaging-test: skip needs a reason");
          }
          skipped.append("README.md line ").append(f.firstLine()).append(" (").append(f.heading())
              .append("): not run: ").append(f.marker().args()).append('\n');
        }
        case "run" -> {
          n++;
          index.add(writeQuickstart(out, "Quickstart" + n, f, parseGivens(f.marker(), givens)));
        }
        default -> throw new ReadmeException("README.md line " + f.marker().line() + ": unknown packaging-test marker \""
            + f.marker().kind() + "\" (run or skip)");
      }
    }
    if (n == 0) {
      throw new ReadmeException("README.md: no block is marked <!-- packaging-test: run -->: nothing would be run");
    }
    copyTree(template, out);
    Files.writeString(out.resolve("pom.xml"), pom, StandardCharsets.UTF_8);
    Path list = out.resolve("src/test/resources/quickstarts.tsv");
    Files.createDirectories(list.getParent());
    Files.write(list, index, StandardCharsets.UTF_8);
    System.out.print(skipped);
  }

  /** The README's dependencyManagement and dependencies, with the app's own JUnit added for its test. */
  static String installXml(List<Fence> install, Map<String, String> properties) throws Exception {
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    Document merged = factory.newDocumentBuilder().newDocument();
    Element root = merged.createElement("install");
    merged.appendChild(root);
    Element managed = null;
    Element dependencies = null;
    for (Fence f : install) {
      Document doc;
      try {
        doc = factory.newDocumentBuilder().parse(new InputSource(new StringReader(
            "<install>" + String.join("\n", f.lines()) + "</install>")));
      } catch (org.xml.sax.SAXParseException e) {
        throw new ReadmeException("README.md line " + (f.firstLine() + e.getLineNumber() - 1)
            + ": the install section's XML does not parse: " + e.getMessage());
      }
      for (Node child = doc.getDocumentElement().getFirstChild(); child != null; child = child.getNextSibling()) {
        if (!(child instanceof Element e)) {
          continue;
        }
        switch (e.getTagName()) {
          case "dependencyManagement" -> {
            if (managed == null) {
              managed = (Element) root.appendChild(merged.importNode(e, true));
            } else {
              appendAll(merged, managed, e);
            }
          }
          case "dependencies" -> {
            if (dependencies == null) {
              dependencies = (Element) root.appendChild(merged.importNode(e, true));
            } else {
              appendAll(merged, dependencies, e);
            }
          }
          default -> throw new ReadmeException("README.md line " + f.firstLine() + ": the install section's XML holds <"
              + e.getTagName() + ">; the packaging test takes only <dependencyManagement> and <dependencies>");
        }
      }
    }
    if (managed == null || !textOf(managed).contains("idem-bom")) {
      throw new ReadmeException("README.md line " + install.get(0).firstLine() + ": the install section imports no dev.idem:idem-bom");
    }
    if (dependencies == null) {
      dependencies = (Element) root.appendChild(merged.createElement("dependencies"));
    }
    dependencies.appendChild(merged.createTextNode("\n  "));
    dependencies.appendChild(merged.createComment(" added by the packaging test: the app's own JUnit, for its test "));
    dependencies.appendChild(merged.createTextNode("\n  "));
    Element junit = merged.createElement("dependency");
    add(merged, junit, "groupId", "org.junit.jupiter");
    add(merged, junit, "artifactId", "junit-jupiter");
    add(merged, junit, "version", property(properties, "junit.version"));
    add(merged, junit, "scope", "test");
    junit.appendChild(merged.createTextNode("\n  "));
    dependencies.appendChild(junit);
    dependencies.appendChild(merged.createTextNode("\n"));

    var transformer = TransformerFactory.newInstance().newTransformer();
    transformer.setOutputProperty(OutputKeys.OMIT_XML_DECLARATION, "yes");
    StringBuilder xml = new StringBuilder();
    for (Node child = root.getFirstChild(); child != null; child = child.getNextSibling()) {
      StringWriter w = new StringWriter();
      transformer.transform(new DOMSource(child), new StreamResult(w));
      xml.append(w).append('\n');
    }
    return xml.toString();
  }

  static void appendAll(Document doc, Element into, Element from) {
    Element target = into;
    Element source = from;
    if (into.getTagName().equals("dependencyManagement")) {
      target = first(into, "dependencies");
      source = first(from, "dependencies");
      if (target == null || source == null) {
        into.appendChild(doc.importNode(from, true));
        return;
      }
    }
    for (Node c = source.getFirstChild(); c != null; c = c.getNextSibling()) {
      target.appendChild(doc.importNode(c, true));
    }
  }

  static Element first(Element parent, String tag) {
    NodeList list = parent.getElementsByTagName(tag);
    return list.getLength() == 0 ? null : (Element) list.item(0);
  }

  static String textOf(Element e) {
    return e.getTextContent();
  }

  static void add(Document doc, Element parent, String tag, String text) {
    parent.appendChild(doc.createTextNode("\n    "));
    Element e = doc.createElement(tag);
    e.setTextContent(text);
    parent.appendChild(e);
  }

  /** The root POM's properties: plugin and JUnit versions are pinned there, once. */
  static Map<String, String> rootProperties(Path rootPom) throws Exception {
    Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(rootPom.toFile());
    Map<String, String> properties = new TreeMap<>();
    Element props = first(doc.getDocumentElement(), "properties");
    for (Node c = props.getFirstChild(); c != null; c = c.getNextSibling()) {
      if (c instanceof Element e) {
        properties.put(e.getTagName(), e.getTextContent().strip());
      }
    }
    return properties;
  }

  static String property(Map<String, String> properties, String name) throws ReadmeException {
    String value = properties.get(name);
    if (value == null || value.isEmpty()) {
      throw new ReadmeException("the root pom.xml has no property " + name + " (the packaging test's template needs it)");
    }
    return value;
  }

  static String substituteProperties(String text, Map<String, String> properties) throws ReadmeException {
    Matcher m = PROPERTY.matcher(text);
    StringBuilder sb = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(sb, Matcher.quoteReplacement(property(properties, m.group(1))));
    }
    m.appendTail(sb);
    return sb.toString();
  }

  static Set<String> givens(Path given) throws IOException {
    Set<String> names = new LinkedHashSet<>();
    Matcher m = GIVEN_METHOD.matcher(Files.readString(given, StandardCharsets.UTF_8));
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  static List<String> parseGivens(Marker marker, Set<String> known) throws ReadmeException {
    if (marker.args().isEmpty()) {
      return List.of();
    }
    Matcher m = GIVEN.matcher(marker.args());
    if (!m.matches()) {
      throw new ReadmeException("README.md line " + marker.line() + ": after \"run\", only given=name,name... (got \""
          + marker.args() + "\")");
    }
    List<String> names = List.of(m.group(1).split(","));
    for (String name : names) {
      if (!known.contains(name)) {
        throw new ReadmeException("README.md line " + marker.line() + ": given \"" + name + "\" is not one the packaging"
            + " test provides " + known + " (packaging-test/template/src/main/java/readme/Given.java)");
      }
    }
    return names;
  }

  /**
   * Writes one quickstart as a program. Line 1 is the package; then the block's leading import
   * lines (blank lines and comments among them kept), one line each; then one wrapper line (the
   * class, main and the givens); then the rest of the block, one line each; then the closing
   * braces. So a javac error or stack frame at line L maps back to one README line.
   *
   * @return the index row: class, README first line, number of import lines, README last line, heading
   */
  static String writeQuickstart(Path out, String name, Fence f, List<String> givens) throws Exception {
    List<String> lines = f.lines();
    int imports = 0;
    boolean anyImport = false;
    while (imports < lines.size()) {
      String t = lines.get(imports).strip();
      if (t.startsWith("import ")) {
        anyImport = true;
      } else if (!(t.isEmpty() || t.startsWith("//"))) {
        break;
      }
      imports++;
    }
    if (!anyImport) {
      throw new ReadmeException("README.md line " + f.firstLine() + " (" + f.heading()
          + "): a quickstart starts with its imports, so that it compiles as written; this one has none");
    }
    for (int i = imports; i < lines.size(); i++) {
      if (lines.get(i).strip().startsWith("import ")) {
        throw new ReadmeException("README.md line " + (f.firstLine() + i) + " (" + f.heading()
            + "): an import after the first statement; a quickstart's imports come first");
      }
    }
    List<String> src = new ArrayList<>();
    src.add("package readme;");
    src.addAll(lines.subList(0, imports));
    StringBuilder wrapper = new StringBuilder()
        .append("/** README.md lines ").append(f.firstLine()).append('-').append(f.firstLine() + lines.size() - 1)
        .append(" (").append(f.heading().replace("*/", "* /")).append("), generated by .ci/packaging-test. */ ")
        .append("public final class ").append(name).append(" { ")
        .append("public static void main(String[] args) { readme.Given.run(").append(name).append("::quickstart); } ")
        .append("static void quickstart() throws Exception {");
    for (String g : givens) {
      wrapper.append(" var ").append(g).append(" = readme.Given.").append(g).append("();");
    }
    src.add(wrapper.toString());
    src.addAll(lines.subList(imports, lines.size()));
    src.add("}}");
    Path file = out.resolve("src/main/java/readme/" + name + ".java");
    Files.createDirectories(file.getParent());
    Files.write(file, src, StandardCharsets.UTF_8);
    return String.join("\t", name, Integer.toString(f.firstLine()), Integer.toString(imports),
        Integer.toString(f.firstLine() + lines.size() - 1), f.heading());
  }

  static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else if (!p.getFileName().toString().equals("pom.xml") || !p.getParent().equals(from)) {
          Files.copy(p, target);
        }
      }
    }
  }

  /** Rewrites javac's "QuickstartN.java:[L,C] message" lines of a Maven log to README lines. */
  static void explain(Path out) throws IOException {
    Map<String, int[]> index = new TreeMap<>();
    for (String row : Files.readAllLines(out.resolve("src/test/resources/quickstarts.tsv"))) {
      String[] c = row.split("\t");
      index.put(c[0], new int[] {Integer.parseInt(c[1]), Integer.parseInt(c[2]), Integer.parseInt(c[3])});
    }
    Pattern error = Pattern.compile("(Quickstart\\d+)\\.java:\\[(\\d+),\\d+\\] (.*)");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    Pattern detail = Pattern.compile("^(?:\\[ERROR\\])?\\s+(symbol|location):\\s*(.*)$");
    Set<String> seen = new LinkedHashSet<>();
    String current = null;
    for (String line; (line = in.readLine()) != null; ) {
      Matcher m = error.matcher(line);
      Matcher d = detail.matcher(line);
      if (m.find() && index.containsKey(m.group(1))) {
        if (current != null) {
          seen.add(current);
        }
        current = readmeLine(index.get(m.group(1)), Integer.parseInt(m.group(2))) + ": " + m.group(3);
      } else if (current != null && d.find()) {
        current += d.group(1).equals("symbol") ? " (" + d.group(2) + ")" : "";
      } else if (current != null) {
        seen.add(current);
        current = null;
      }
    }
    if (current != null) {
      seen.add(current);
    }
    seen.forEach(System.out::println);
  }

  /** The README line of generated line {@code l} (see writeQuickstart), or a description of it. */
  static String readmeLine(int[] row, int l) {
    int first = row[0];
    int imports = row[1];
    if (l >= 2 && l <= 1 + imports) {
      return "README.md line " + (first + l - 2);
    }
    if (l >= 3 + imports && first + l - 3 <= row[2]) {
      return "README.md line " + (first + l - 3);
    }
    return "README.md after line " + row[2] + " (the wrapper's closing braces)";
  }
}
