import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Generates the Spring Boot app of README.md's "Quickstart: Spring Boot" for .ci/packaging-test,
 * under one Boot parent: the section's properties block becomes application.properties, its java
 * block the app's class, the version properties its text tells a Boot-parent app to set go into
 * the POM (packaging-test/spring-boot/pom.xml), and the test is the sample app's
 * (examples/spring-boot-app), which proves what the section says (a repeated order replayed, one
 * charge under the order's key, webhooks verified and handled once).
 *
 * <pre>java SpringBootApp.java README ROOT_POM TEMPLATE_POM SAMPLE_TEST OUT REPOSITORY_URL IDEM_VERSION BOOT_VERSION</pre>
 *
 * Exits 2 with a message naming the README line when the section is not as this expects.
 */
public final class SpringBootApp {
  private static final String HEADING = "## Quickstart: Spring Boot";
  private static final String PACKAGE = "dev.idem.examples.spring";

  public static void main(String[] args) throws IOException {
    if (args.length != 8) {
      System.err.println("usage: SpringBootApp README ROOT_POM TEMPLATE_POM SAMPLE_TEST OUT REPOSITORY_URL IDEM_VERSION BOOT_VERSION");
      System.exit(64);
    }
    Path readme = Path.of(args[0]);
    String boot = args[7];
    List<String> lines = Files.readAllLines(readme);
    int start = lines.indexOf(HEADING);
    if (start < 0) {
      fail("README.md: no \"" + HEADING + "\" section");
    }
    int end = start + 1;
    while (end < lines.size() && !lines.get(end).startsWith("## ")) {
      end++;
    }
    String properties = fence(lines, start, end, "properties");
    String app = fence(lines, start, end, "java");
    String prose = String.join("\n", lines.subList(start, end));

    Map<String, String> set = new LinkedHashMap<>();
    set.put("sqlite-jdbc.version", named(prose, "sqlite-jdbc.version", start));
    String jackson = named(prose, "jackson-bom.version", start);
    String boot4Jackson = "jackson-2-bom.version";
    if (boot.startsWith("3.")) {
      set.put("jackson-bom.version", jackson);
    } else {
      // Boot 4's jackson-bom.version is Jackson 3's; the README names the property Jackson 2 takes.
      require(prose.contains("<" + boot4Jackson + ">"), start, "names no <" + boot4Jackson + "> for Boot 4.0");
      set.put(boot4Jackson, jackson);
    }
    String lineDependencies = "";
    if (!boot.startsWith("3.")) {
      // Boot 4 moved the RestClient.Builder bean out of spring-boot-starter-web.
      require(prose.contains("spring-boot-starter-restclient"), start,
          "does not tell a Boot 4.0 app to add spring-boot-starter-restclient (the RestClient.Builder bean)");
      lineDependencies = "<dependency><groupId>org.springframework.boot</groupId>"
          + "<artifactId>spring-boot-starter-restclient</artifactId></dependency>";
    }
    Matcher cls = Pattern.compile("(?m)^public class (\\w+)").matcher(app);
    require(cls.find(), start, "the java block declares no public class");

    Map<String, String> root = properties(Files.readString(Path.of(args[1])));
    StringBuilder props = new StringBuilder();
    set.forEach((k, v) -> props.append('<').append(k).append('>').append(v).append("</").append(k).append(">\n    "));
    String pom = Files.readString(Path.of(args[2]))
        .replace("@BOOT_VERSION@", boot)
        .replace("@README_PROPERTIES@", props.toString().strip())
        .replace("@BOOT_LINE_DEPENDENCIES@", lineDependencies)
        .replace("@IDEM_REPOSITORY_URL@", args[5])
        .replace("@IDEM_VERSION@", args[6]);
    for (String p : List.of("kotlin.version", "resources-plugin.version", "compiler-plugin.version", "surefire.version",
        "dependency-plugin.version")) {
      String v = root.get(p);
      if (v == null) {
        fail("the root pom.xml has no <" + p + ">");
      }
      pom = pom.replace("@" + p + "@", v);
    }
    Path out = Path.of(args[4]);
    Path main = out.resolve("src/main/java").resolve(PACKAGE.replace('.', '/'));
    Path test = out.resolve("src/test/java").resolve(PACKAGE.replace('.', '/'));
    Files.createDirectories(main);
    Files.createDirectories(test);
    Files.createDirectories(out.resolve("src/main/resources"));
    Files.writeString(out.resolve("pom.xml"), pom);
    Files.writeString(main.resolve(cls.group(1) + ".java"), "package " + PACKAGE + ";\n\n" + app);
    Files.writeString(out.resolve("src/main/resources/application.properties"), properties);
    Path sampleTest = Path.of(args[3]);
    Files.copy(sampleTest, test.resolve(sampleTest.getFileName()));
    System.out.println("README.md line " + (start + 1) + " (" + HEADING.substring(3) + "): class " + cls.group(1)
        + ", " + properties.lines().count() + " properties, " + set + (lineDependencies.isEmpty() ? "" : ", starter-restclient"));
  }

  /** The first ```LANG block between the lines start and end, without its fences. */
  private static String fence(List<String> lines, int start, int end, String lang) {
    for (int i = start; i < end; i++) {
      if (lines.get(i).equals("```" + lang)) {
        StringBuilder b = new StringBuilder();
        for (int j = i + 1; j < end; j++) {
          if (lines.get(j).equals("```")) {
            return b.toString();
          }
          b.append(lines.get(j)).append('\n');
        }
        fail("README.md line " + (i + 1) + ": a ```" + lang + " block that does not end");
      }
    }
    fail("README.md line " + (start + 1) + " (" + HEADING.substring(3) + "): no ```" + lang + " block");
    return null;
  }

  private static String named(String prose, String property, int start) {
    Matcher m = Pattern.compile("<" + Pattern.quote(property) + ">([^<]+)</" + Pattern.quote(property) + ">").matcher(prose);
    require(m.find(), start, "names no <" + property + ">VERSION</" + property + ">");
    return m.group(1);
  }

  private static Map<String, String> properties(String pom) {
    Map<String, String> p = new LinkedHashMap<>();
    Matcher block = Pattern.compile("(?s)<properties>(.*?)</properties>").matcher(pom);
    if (block.find()) {
      Matcher m = Pattern.compile("<([\\w.-]+)>([^<]*)</\\1>").matcher(block.group(1));
      while (m.find()) {
        p.put(m.group(1), m.group(2).strip());
      }
    }
    return p;
  }

  private static void require(boolean ok, int start, String what) {
    if (!ok) {
      fail("README.md line " + (start + 1) + " (" + HEADING.substring(3) + "): " + what);
    }
  }

  private static void fail(String message) {
    System.err.println(message);
    System.exit(2);
  }
}
