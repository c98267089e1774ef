package dev.idem.examples.architecture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Holds the published API (issue 25): no module reaches into another module's {@code internal}
 * package, and no public type appears in (or leaves) a published package without review. The
 * reviewed list is {@code src/test/resources/architecture/public-api.txt}; a change to the API
 * changes that file in the same commit, where a reviewer sees it. The published modules are those
 * the BOM lists, so a new module is checked from its first commit. A root package a user reads as
 * one page also has a ceiling: {@code dev.idem.core} holds at most 25 public types, so a type that
 * would be the 26th goes to a sub-package (a feature's, {@code spi} or {@code internal}) or another
 * leaves first.
 */
class ArchitectureTest {
  private static final String BASELINE = "architecture/public-api.txt";
  /** The most public types a user's page may hold (issue 25: "a page a user can read"). */
  static final Map<String, Integer> CEILINGS = Map.of(
      "dev.idem.core", 25,
      "dev.idem.server", 25,
      "dev.idem.webhooks", 25);

  /**
   * Published modules that are internal as a whole: {@code idem-storage} is the storage layer under
   * persistence, server and webhooks (issue 26). It is published only because those three depend
   * on it, and its package-info says "for Idem's own modules, no compatibility promise". Its types
   * are therefore not API (not in public-api.txt, not reviewed as such), and the Idem modules above
   * it may use them; its package is not named {@code internal} because it is the whole module, used
   * by three others, which the per-module {@code internal} rule forbids. Apps get it transitively
   * and never import it: no README or docs snippet does (ReadmeSnippetsTest compiles them all).
   */
  static final Set<String> INTERNAL_MODULES = Set.of("storage");

  @Test
  void noModuleUsesAnotherModulesInternals() {
    ApiSurface api = ApiSurface.read(root(), publishedModules(), INTERNAL_MODULES);
    assertEquals(List.of(), api.crossModuleInternalUses().stream().map(Object::toString).toList());
  }

  @Test
  void thePublicApiIsTheReviewedOne() throws IOException {
    ApiSurface api = ApiSurface.read(root(), publishedModules(), INTERNAL_MODULES);
    String problems = compare(api.publicTypes(), baseline());
    assertEquals("", problems, problems + "\nThe public types now, per package: " + api.countsByPackage()
        + "\nIf the change is intended, put this list in examples/src/test/resources/" + BASELINE + ":\n"
        + String.join("\n", api.publicTypes()));
  }

  @Test
  void rootPackagesStayWithinTheirCeilings() {
    ApiSurface api = ApiSurface.read(root(), publishedModules(), INTERNAL_MODULES);
    assertEquals(List.of(), overCeiling(api.countsByPackage(), CEILINGS),
        "The public types per package: " + api.countsByPackage());
  }

  /** The ceiling can fail: 25 public types in dev.idem.core pass, a planted 26th is reported. */
  @Test
  void aPlanted26thTypeInTheCorePackageIsReported(@TempDir Path root) throws IOException {
    for (int i = 1; i <= 25; i++) {
      write(root, "core/src/main/java/dev/idem/core/Type" + i + ".java",
          "package dev.idem.core;\npublic final class Type" + i + " {}\n");
    }
    write(root, "core/src/main/java/dev/idem/core/Hidden.java", "package dev.idem.core;\nfinal class Hidden {}\n");
    write(root, "core/src/main/java/dev/idem/core/internal/Impl.java",
        "package dev.idem.core.internal;\npublic final class Impl {}\n");
    assertEquals(List.of(), overCeiling(ApiSurface.read(root, List.of("core")).countsByPackage(), CEILINGS),
        "25 public types, a package-private one and an internal one are within the ceiling");

    write(root, "core/src/main/java/dev/idem/core/Planted.java", "package dev.idem.core;\npublic record Planted(int x) {}\n");

    assertEquals(List.of("dev.idem.core has 26 public types, over its ceiling of 25"),
        overCeiling(ApiSurface.read(root, List.of("core")).countsByPackage(), CEILINGS));
  }

  /** The checks can fail: a planted cross-module import and an unreviewed public type are caught. */
  @Test
  void plantedViolationsAreReported(@TempDir Path root) throws IOException {
    write(root, "alpha/src/main/java/dev/idem/alpha/internal/Secret.java",
        "package dev.idem.alpha.internal;\npublic final class Secret {}\n");
    write(root, "alpha/src/main/java/dev/idem/alpha/Api.java",
        "package dev.idem.alpha;\nimport dev.idem.alpha.internal.Secret;\npublic final class Api {}\n");
    write(root, "beta/src/main/java/dev/idem/beta/Uses.java",
        "package dev.idem.beta;\n\nimport dev.idem.alpha.internal.Secret;\npublic final class Uses {}\n");
    write(root, "beta/src/main/java/dev/idem/beta/Added.java",
        "package dev.idem.beta;\npublic record Added(int x) {}\n");

    ApiSurface api = ApiSurface.read(root, List.of("alpha", "beta"));

    List<ApiSurface.Violation> uses = api.crossModuleInternalUses();
    assertEquals(1, uses.size(), uses.toString());
    assertEquals("beta", uses.get(0).module());
    assertEquals(3, uses.get(0).line());
    assertEquals("alpha", uses.get(0).owner());
    String problems = compare(api.publicTypes(), Set.of("dev.idem.alpha.Api", "dev.idem.beta.Uses", "dev.idem.beta.Gone"));
    assertTrue(problems.contains("added without review: [dev.idem.beta.Added]"), problems);
    assertTrue(problems.contains("removed: [dev.idem.beta.Gone]"), problems);
    assertFalse(api.publicTypes().contains("dev.idem.alpha.internal.Secret"), "internal types are not API");
  }

  /** An internal module's public types are not API; the storage module is one and is published. */
  @Test
  void anInternalModulesTypesAreNotApi(@TempDir Path root) throws IOException {
    write(root, "store/src/main/java/dev/idem/store/Opener.java", "package dev.idem.store;\npublic final class Opener {}\n");
    write(root, "user/src/main/java/dev/idem/user/Api.java",
        "package dev.idem.user;\nimport dev.idem.store.Opener;\npublic final class Api {}\n");

    assertEquals(Set.of("dev.idem.store.Opener", "dev.idem.user.Api"),
        ApiSurface.read(root, List.of("store", "user")).publicTypes());
    ApiSurface api = ApiSurface.read(root, List.of("store", "user"), Set.of("store"));
    assertEquals(Set.of("dev.idem.user.Api"), api.publicTypes());
    assertEquals(List.of(), api.crossModuleInternalUses());
    assertTrue(publishedModules().containsAll(INTERNAL_MODULES), "the internal modules are published (in the BOM)");
  }

  private static List<String> overCeiling(Map<String, Integer> counts, Map<String, Integer> ceilings) {
    List<String> problems = new ArrayList<>();
    new TreeMap<>(ceilings).forEach((pkg, ceiling) -> {
      int n = counts.getOrDefault(pkg, 0);
      if (n > ceiling) {
        problems.add(pkg + " has " + n + " public types, over its ceiling of " + ceiling);
      }
    });
    return problems;
  }

  private static String compare(Set<String> now, Set<String> reviewed) {
    Set<String> added = new TreeSet<>(now);
    added.removeAll(reviewed);
    Set<String> removed = new TreeSet<>(reviewed);
    removed.removeAll(now);
    List<String> problems = new ArrayList<>();
    if (!added.isEmpty()) {
      problems.add("public types added without review: " + added);
    }
    if (!removed.isEmpty()) {
      problems.add("public types removed: " + removed);
    }
    return String.join("; ", problems);
  }

  private static Set<String> baseline() throws IOException {
    try (var in = ArchitectureTest.class.getClassLoader().getResourceAsStream(BASELINE)) {
      if (in == null) {
        throw new IllegalStateException("missing test resource " + BASELINE);
      }
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines()
          .map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#"))
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }

  /** The folders of the dev.idem artifacts the BOM manages ({@code idem-sdk-core} is {@code sdk-core}). */
  static List<String> publishedModules() {
    try {
      String bom = Files.readString(root().resolve("bom/pom.xml"));
      Matcher m = Pattern.compile("<groupId>dev\\.idem</groupId>\\s*<artifactId>idem-([\\w-]+)</artifactId>").matcher(bom);
      Set<String> modules = new LinkedHashSet<>();
      while (m.find()) {
        if (!m.group(1).equals("bom")) {
          modules.add(m.group(1));
        }
      }
      assertFalse(modules.isEmpty(), "no dev.idem artifact found in bom/pom.xml");
      return List.copyOf(modules);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static Path root() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isDirectory(dir.resolve("sdk-core")) && Files.isRegularFile(dir.resolve("bom/pom.xml"))) {
        return dir;
      }
    }
    throw new IllegalStateException("no repository root (with sdk-core and bom/pom.xml) above " + Path.of("").toAbsolutePath());
  }

  private static void write(Path root, String path, String text) throws IOException {
    Path file = root.resolve(path);
    Files.createDirectories(file.getParent());
    Files.writeString(file, text);
  }
}
