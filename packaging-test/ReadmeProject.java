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
import org.xml.sax.SAXParseException;

/**
 * Turns README.md into a separate Maven project, the way a new user would copy it: the install
 * section's XML becomes the project's dependencies, and each block marked
 * {@code <!-- packaging-test: run -->} becomes a program. Run by .ci/packaging-test with Java's
 * single-file launcher; the rules are in docs/packaging-test.md.
 *
 * <pre>
 * java ReadmeProject.java selftest                   (the rules below, on small fixtures)
 * java ReadmeProject.java generate README.md CANARIES.md ROOT_POM TEMPLATE_DIR OUT_DIR IDEM_REPOSITORY_URL
 * java ReadmeProject.java explain OUT_DIR &lt; maven.log   (javac's errors, with their README line)
 * </pre>
 *
 * A fault of the README exits with status 3 and a message naming its line. The canaries file
 * holds blocks that must FAIL the run (no call, no key, two keys, an exception), so that the test
 * is seen to catch each; it alone may use {@code <!-- packaging-test: canary expect=TEXT -->}.
 */
public class ReadmeProject {
  static final Pattern MARKER = Pattern.compile("^<!--\\s*packaging-test:\\s*(\\S+)(.*?)-->\\s*$");
  static final Pattern GIVEN = Pattern.compile("^given=([A-Za-z0-9_,]+)$");
  static final Pattern GIVEN_METHOD = Pattern.compile("public static \\S+ ([A-Za-z_][A-Za-z0-9_]*)\\(\\)");
  static final Pattern PROPERTY = Pattern.compile("@([A-Za-z0-9_.-]+)@");

  public static void main(String[] args) throws Exception {
    try {
      if (args.length == 7 && args[0].equals("generate")) {
        generate(Path.of(args[1]), Path.of(args[2]), Path.of(args[3]), Path.of(args[4]), Path.of(args[5]), args[6]);
      } else if (args.length == 2 && args[0].equals("explain")) {
        explain(Path.of(args[1]));
      } else if (args.length == 1 && args[0].equals("selftest")) {
        SelfTest.run();
      } else {
        System.err.println("usage: selftest | generate README CANARIES ROOT_POM TEMPLATE_DIR OUT_DIR REPO_URL | explain OUT_DIR < log");
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

  /** A fenced block: its file, language, nearest heading, the marker before it, its code lines. */
  record Fence(String file, String lang, String heading, int firstLine, List<String> lines, Marker marker) {
    String at(int line) {
      return file + " line " + line;
    }

    int lastLine() {
      return firstLine + lines.size() - 1;
    }
  }

  /** {@code <!-- packaging-test: KIND ARGS -->} on the last non-blank line before a fence. */
  record Marker(int line, String kind, String args) {}

  /**
   * A block to run as a program.
   *
   * @param imports how many leading lines of the block are its imports (blank lines and comments among them)
   * @param expect empty for a quickstart; for a canary, text the failure must contain
   */
  record Program(Fence fence, List<String> givens, int imports, String expect) {}

  static List<Fence> fences(String file, List<String> md) throws ReadmeException {
    List<Fence> fences = new ArrayList<>();
    String heading = "(before any heading)";
    Marker pending = null;
    for (int i = 0; i < md.size(); i++) {
      String line = md.get(i);
      String trimmed = line.strip();
      if (trimmed.startsWith("```")) {
        String lang = trimmed.substring(3).strip();
        List<String> code = new ArrayList<>();
        int j = i + 1;
        while (j < md.size() && !md.get(j).strip().equals("```")) {
          code.add(md.get(j));
          j++;
        }
        if (j == md.size()) {
          throw new ReadmeException(file + " line " + (i + 1) + ": fence ```" + lang + " is never closed");
        }
        fences.add(new Fence(file, lang, heading, i + 2, code, pending));
        pending = null;
        i = j;
        continue;
      }
      Matcher m = MARKER.matcher(trimmed);
      if (m.matches()) {
        if (pending != null) {
          throw new ReadmeException(file + " line " + pending.line() + ": packaging-test marker is not followed by a code block");
        }
        pending = new Marker(i + 1, m.group(1), m.group(2).strip());
      } else if (!trimmed.isEmpty()) {
        if (pending != null) {
          throw new ReadmeException(file + " line " + pending.line()
              + ": a packaging-test marker must come just before its ```java block (only blank lines between)");
        }
        if (line.startsWith("#")) {
          heading = line.replaceFirst("^#+\\s*", "").strip();
        }
      }
    }
    if (pending != null) {
      throw new ReadmeException(file + " line " + pending.line() + ": packaging-test marker is not followed by a code block");
    }
    return fences;
  }

  /**
   * The blocks to run, by the rules: every java block under a heading that starts with
   * "Quickstart" carries a marker; "run" blocks start with their imports and name what they leave
   * to the app with given=...; "skip" needs a reason; a canary (only in the canaries file) says
   * what its failure must contain.
   */
  static List<Program> plan(List<Fence> fences, Set<String> known, boolean canaries, List<String> notes)
      throws ReadmeException {
    List<Program> programs = new ArrayList<>();
    for (Fence f : fences) {
      Marker marker = f.marker();
      if (marker == null) {
        if (f.heading().startsWith("Quickstart") && f.lang().equals("java")) {
          throw new ReadmeException(f.at(f.firstLine() - 1) + " (" + f.heading() + "): a java block under a Quickstart"
              + " heading needs <!-- packaging-test: run --> (or <!-- packaging-test: skip REASON -->) on the line before it");
        }
        continue;
      }
      if (!f.lang().equals("java")) {
        throw new ReadmeException(f.at(marker.line()) + ": packaging-test marks a ```" + f.lang() + " block; only java blocks run");
      }
      switch (marker.kind()) {
        case "skip" -> {
          if (marker.args().isEmpty()) {
            throw new ReadmeException(f.at(marker.line()) + ": packaging-test: skip needs a reason");
          }
          notes.add(f.at(f.firstLine()) + " (" + f.heading() + "): not run: " + marker.args());
        }
        case "run" -> programs.add(new Program(f, parseGivens(f, marker.args(), known), imports(f), ""));
        case "canary" -> {
          if (!canaries) {
            throw new ReadmeException(f.at(marker.line()) + ": unknown packaging-test marker \"canary\" (run or skip)");
          }
          String[] parts = marker.args().split("\\s+(?=given=)|(?<=\\S)\\s+(?=expect=)");
          String expect = "";
          String givens = "";
          for (String part : parts) {
            if (part.startsWith("expect=")) {
              expect = part.substring("expect=".length()).strip();
            } else if (part.startsWith("given=")) {
              givens = part;
            }
          }
          if (expect.isEmpty()) {
            throw new ReadmeException(f.at(marker.line()) + ": a canary needs expect=TEXT (what its failure says)");
          }
          programs.add(new Program(f, parseGivens(f, givens, known), imports(f), expect));
        }
        default -> throw new ReadmeException(f.at(marker.line()) + ": unknown packaging-test marker \""
            + marker.kind() + "\" (run or skip)");
      }
    }
    if (!canaries && programs.isEmpty()) {
      throw new ReadmeException(fences.isEmpty() ? "no code block at all"
          : fences.get(0).file() + ": no block is marked <!-- packaging-test: run -->: nothing would be run");
    }
    return programs;
  }

  static List<String> parseGivens(Fence f, String args, Set<String> known) throws ReadmeException {
    if (args.isEmpty()) {
      return List.of();
    }
    Matcher m = GIVEN.matcher(args);
    if (!m.matches()) {
      throw new ReadmeException(f.at(f.marker().line()) + ": after \"run\", only given=name,name... (got \"" + args + "\")");
    }
    List<String> names = List.of(m.group(1).split(","));
    for (String name : names) {
      if (!known.contains(name)) {
        throw new ReadmeException(f.at(f.marker().line()) + ": given \"" + name + "\" is not one the packaging"
            + " test provides " + known + " (packaging-test/template/src/main/java/readme/Given.java)");
      }
    }
    return names;
  }

  /** How many leading lines are the block's imports; there must be some, and none later. */
  static int imports(Fence f) throws ReadmeException {
    List<String> lines = f.lines();
    int imports = 0;
    boolean any = false;
    while (imports < lines.size()) {
      String t = lines.get(imports).strip();
      if (t.startsWith("import ")) {
        any = true;
      } else if (!(t.isEmpty() || t.startsWith("//"))) {
        break;
      }
      imports++;
    }
    if (!any) {
      throw new ReadmeException(f.at(f.firstLine()) + " (" + f.heading()
          + "): a quickstart starts with its imports, so that it compiles as written; this one has none");
    }
    for (int i = imports; i < lines.size(); i++) {
      if (lines.get(i).strip().startsWith("import ")) {
        throw new ReadmeException(f.at(f.firstLine() + i) + " (" + f.heading()
            + "): an import after the first statement; a quickstart's imports come first");
      }
    }
    return imports;
  }

  /**
   * One program's source. Line 1 is the package; then the block's import lines, one line each;
   * then one wrapper line (the class, main and the givens as local variables); then the rest of
   * the block, one line each; then the closing braces. So a javac error or a stack frame at line L
   * maps back to one line of the block ({@link #blockLine}).
   */
  static List<String> source(String className, Program p) {
    Fence f = p.fence();
    List<String> src = new ArrayList<>();
    src.add("package readme;");
    src.addAll(f.lines().subList(0, p.imports()));
    StringBuilder wrapper = new StringBuilder()
        .append("/** ").append(f.file()).append(" lines ").append(f.firstLine()).append('-').append(f.lastLine())
        .append(" (").append(f.heading().replace("*/", "* /")).append("), generated by .ci/packaging-test. */ ")
        .append("public final class ").append(className).append(" { ")
        .append("public static void main(String[] args) { readme.Given.run(").append(className).append("::quickstart); } ")
        .append("static void quickstart() throws Exception {");
    for (String g : p.givens()) {
      wrapper.append(" var ").append(g).append(" = readme.Given.").append(g).append("();");
    }
    src.add(wrapper.toString());
    src.addAll(f.lines().subList(p.imports(), f.lines().size()));
    src.add("}}");
    return src;
  }

  /** The block line (file numbering) of generated source line {@code l}, or -1 for the wrapper's lines. */
  static int blockLine(int first, int imports, int last, int l) {
    if (l >= 2 && l <= 1 + imports) {
      return first + l - 2;
    }
    if (l >= 3 + imports && first + l - 3 <= last) {
      return first + l - 3;
    }
    return -1;
  }

  static void generate(Path readme, Path canaryFile, Path rootPom, Path template, Path out, String repoUrl)
      throws Exception {
    List<Fence> fences = fences("README.md", Files.readAllLines(readme, StandardCharsets.UTF_8));
    Map<String, String> properties = rootProperties(rootPom);

    // 1. The install section's XML, as written.
    List<Fence> install = fences.stream()
        .filter(f -> f.lang().equals("xml") && f.heading().startsWith("Install")).collect(Collectors.toList());
    String pom = Files.readString(template.resolve("pom.xml"), StandardCharsets.UTF_8)
        .replace("<!-- @README_INSTALL@ -->", "<!-- README_INSTALL -->")
        .replace("@IDEM_REPOSITORY_URL@", "IDEM_REPOSITORY_URL");
    pom = substituteProperties(pom, properties)
        .replace("<!-- README_INSTALL -->", installXml(install, property(properties, "junit.version")))
        .replace("IDEM_REPOSITORY_URL", repoUrl);

    // 2. The quickstarts, then the canaries.
    Set<String> known = givens(template.resolve("src/main/java/readme/Given.java"));
    List<String> notes = new ArrayList<>();
    List<Program> quickstarts = plan(fences, known, false, notes);
    List<Program> canaries = plan(fences(canaryFile.getFileName().toString(),
        Files.readAllLines(canaryFile, StandardCharsets.UTF_8)), known, true, notes);

    copyTree(template, out);
    Files.writeString(out.resolve("pom.xml"), pom, StandardCharsets.UTF_8);
    List<String> index = new ArrayList<>();
    write(out, "Quickstart", quickstarts, index);
    write(out, "Canary", canaries, index);
    Path list = out.resolve("src/test/resources/quickstarts.tsv");
    Files.createDirectories(list.getParent());
    Files.write(list, index, StandardCharsets.UTF_8);
    notes.forEach(n -> System.out.println("packaging-test: " + n));
  }

  /** Writes each program; its index row: class, file, first line, import lines, last line, heading, expect. */
  static void write(Path out, String prefix, List<Program> programs, List<String> index) throws IOException {
    for (int i = 0; i < programs.size(); i++) {
      Program p = programs.get(i);
      String name = prefix + (i + 1);
      Path file = out.resolve("src/main/java/readme/" + name + ".java");
      Files.createDirectories(file.getParent());
      Files.write(file, source(name, p), StandardCharsets.UTF_8);
      Fence f = p.fence();
      index.add(String.join("\t", name, f.file(), Integer.toString(f.firstLine()), Integer.toString(p.imports()),
          Integer.toString(f.lastLine()), f.heading(), p.expect()));
    }
  }

  /** The README's dependencyManagement and dependencies, with the app's own JUnit added for its test. */
  static String installXml(List<Fence> install, String junitVersion) throws Exception {
    if (install.isEmpty()) {
      throw new ReadmeException("README.md: no ```xml block under a heading starting with \"Install\"");
    }
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    Document merged = factory.newDocumentBuilder().newDocument();
    Element root = merged.createElement("install");
    merged.appendChild(root);
    Element managed = null;
    Element dependencies = null;
    for (Fence f : install) {
      Document doc;
      try {
        var builder = factory.newDocumentBuilder();
        builder.setErrorHandler(new org.xml.sax.helpers.DefaultHandler() {
          @Override
          public void fatalError(SAXParseException e) throws SAXParseException {
            throw e; // reported below with its README line; the default handler would also print it
          }
        });
        doc = builder.parse(new InputSource(new StringReader(
            "<install>" + String.join("\n", f.lines()) + "</install>")));
      } catch (SAXParseException e) {
        throw new ReadmeException(f.at(f.firstLine() + e.getLineNumber() - 1)
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
          default -> throw new ReadmeException(f.at(f.firstLine()) + ": the install section's XML holds <"
              + e.getTagName() + ">; the packaging test takes only <dependencyManagement> and <dependencies>");
        }
      }
    }
    if (managed == null || !managed.getTextContent().contains("idem-bom")) {
      throw new ReadmeException(install.get(0).at(install.get(0).firstLine()) + ": the install section imports no dev.idem:idem-bom");
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
    add(merged, junit, "version", junitVersion);
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

  static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else if (!p.equals(from.resolve("pom.xml"))) {
          Files.copy(p, target);
        }
      }
    }
  }

  /** Rewrites javac's "QuickstartN.java:[L,C] message" lines of a Maven log to README lines. */
  static void explain(Path out) throws IOException {
    Map<String, String[]> index = new TreeMap<>();
    for (String row : Files.readAllLines(out.resolve("src/test/resources/quickstarts.tsv"))) {
      String[] c = row.split("\t", -1);
      index.put(c[0], c);
    }
    Pattern error = Pattern.compile("((?:Quickstart|Canary)\\d+)\\.java:\\[(\\d+),\\d+\\] (.*)");
    Pattern detail = Pattern.compile("^(?:\\[ERROR\\])?\\s+(symbol|location):\\s*(.*)$");
    Set<String> seen = new LinkedHashSet<>();
    String current = null;
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      Matcher m = error.matcher(line);
      Matcher d = detail.matcher(line);
      if (m.find() && index.containsKey(m.group(1))) {
        if (current != null) {
          seen.add(current);
        }
        String[] c = index.get(m.group(1));
        int at = blockLine(Integer.parseInt(c[2]), Integer.parseInt(c[3]), Integer.parseInt(c[4]), Integer.parseInt(m.group(2)));
        current = (at > 0 ? c[1] + " line " + at : c[1] + " after line " + c[4] + " (the wrapper's closing braces)")
            + ": " + m.group(3);
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

  /** The generator's own rules, each on a small fixture that must be refused with its line. */
  static final class SelfTest {
    private static int cases;

    static void run() throws Exception {
      Set<String> known = Set.of("url", "json");
      refused("a quickstart without a marker", known, List.of(
          "## Quickstart: x", "```java", "import a.B;", "B.go();", "```"),
          "README.md line 2 (Quickstart: x): a java block under a Quickstart heading needs");
      refused("a run block without imports", known, List.of(
          "## Quickstart: x", "<!-- packaging-test: run -->", "```java", "B.go();", "```"),
          "README.md line 4 (Quickstart: x): a quickstart starts with its imports");
      refused("an import after a statement", known, List.of(
          "## Quickstart: x", "<!-- packaging-test: run -->", "```java", "import a.B;", "B.go();", "import a.C;", "```"),
          "README.md line 6 (Quickstart: x): an import after the first statement");
      refused("an unknown given", known, List.of(
          "## Quickstart: x", "<!-- packaging-test: run given=url,journl -->", "```java", "import a.B;", "```"),
          "README.md line 2: given \"journl\" is not one the packaging test provides");
      refused("a marker followed by text", known, List.of(
          "<!-- packaging-test: run -->", "Some text.", "```java", "import a.B;", "```"),
          "README.md line 1: a packaging-test marker must come just before");
      refused("a marker at the end", known, List.of("<!-- packaging-test: run -->", ""),
          "README.md line 1: packaging-test marker is not followed by a code block");
      refused("a skip without a reason", known, List.of(
          "## Quickstart: x", "<!-- packaging-test: skip -->", "```java", "import a.B;", "```"),
          "README.md line 2: packaging-test: skip needs a reason");
      refused("a canary in the README", known, List.of(
          "<!-- packaging-test: canary expect=x -->", "```java", "import a.B;", "```"),
          "README.md line 1: unknown packaging-test marker \"canary\"");
      refused("a misspelt marker", known, List.of(
          "<!-- packaging-test: runs -->", "```java", "import a.B;", "```"),
          "README.md line 1: unknown packaging-test marker \"runs\"");
      refused("a marked xml block", known, List.of(
          "<!-- packaging-test: run -->", "```xml", "<a/>", "```"),
          "README.md line 1: packaging-test marks a ```xml block");
      refused("nothing to run", known, List.of("## Usage", "```java", "int a = 1;", "```"),
          "README.md: no block is marked <!-- packaging-test: run -->");
      refused("an open fence", known, List.of("## Usage", "```java", "int a = 1;"),
          "README.md line 2: fence ```java is never closed");
      refusedInstall(List.of("## Install", "```xml", "<dependencies>", "  <dependency>", "</dependencies>", "```"),
          "README.md line 5: the install section's XML does not parse");
      refusedInstall(List.of("## Install", "```xml", "<dependencies/>", "```"),
          "README.md line 3: the install section imports no dev.idem:idem-bom");
      refusedInstall(List.of("## Usage", "```xml", "<dependencies/>", "```"),
          "README.md: no ```xml block under a heading starting with \"Install\"");

      // A well-formed quickstart: skip notes, givens, and every generated line maps to its own README line.
      List<String> md = List.of(
          "## Quickstart: x",                                 // 1
          "<!-- packaging-test: skip a Retrofit interface -->",  // 2
          "```java",                                          // 3
          "interface Api {}",                                 // 4
          "```",                                              // 5
          "<!-- packaging-test: run given=url -->",           // 6
          "",                                                 // 7
          "```java",                                          // 8
          "import java.net.URI;",                             // 9
          "",                                                 // 10
          "URI u = URI.create(url);",                         // 11
          "System.out.println(u);",                           // 12
          "```");                                             // 13
      List<String> notes = new ArrayList<>();
      List<Program> programs = plan(fences("README.md", md), known, false, notes);
      check(programs.size() == 1 && programs.get(0).givens().equals(List.of("url")) && programs.get(0).imports() == 2,
          "one program with given url and 2 import lines: " + programs);
      check(notes.equals(List.of("README.md line 4 (Quickstart: x): not run: a Retrofit interface")), "skip note: " + notes);
      List<String> src = source("Quickstart1", programs.get(0));
      check(src.get(3).contains("var url = readme.Given.url();"), "the wrapper line declares the given: " + src.get(3));
      for (int l = 1; l <= src.size(); l++) {
        int at = blockLine(9, 2, 12, l);
        if (at > 0) {
          check(src.get(l - 1).equals(md.get(at - 1)), "generated line " + l + " is README line " + at + ": " + src);
        } else {
          check(l == 1 || l == 4 || l == src.size(), "generated line " + l + " maps to no README line: " + src);
        }
      }
      List<Program> canaries = plan(fences("canaries.md", List.of(
          "<!-- packaging-test: canary given=url expect=no request from it -->", "```java", "import a.B;", "```")),
          known, true, notes);
      check(canaries.get(0).expect().equals("no request from it") && canaries.get(0).givens().equals(List.of("url")),
          "canary parsed: " + canaries);
      System.out.println("packaging-test: generator self-test, " + cases + " cases OK");
    }

    static void refused(String what, Set<String> known, List<String> md, String message) throws Exception {
      try {
        plan(fences("README.md", md), known, false, new ArrayList<>());
      } catch (ReadmeException e) {
        check(e.getMessage().startsWith(message), what + ": expected \"" + message + "...\", got \"" + e.getMessage() + "\"");
        return;
      }
      check(false, what + ": accepted, expected \"" + message + "\"");
    }

    static void refusedInstall(List<String> md, String message) throws Exception {
      try {
        installXml(fences("README.md", md).stream().filter(f -> f.heading().startsWith("Install"))
            .collect(Collectors.toList()), "5.14.4");
      } catch (ReadmeException e) {
        check(e.getMessage().startsWith(message), "install: expected \"" + message + "...\", got \"" + e.getMessage() + "\"");
        return;
      }
      check(false, "install accepted, expected \"" + message + "\"");
    }

    static void check(boolean ok, String message) {
      cases++;
      if (!ok) {
        System.err.println("packaging-test: generator self-test FAILED: " + message);
        System.exit(1);
      }
    }
  }
}
