package dev.idem.examples.architecture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What the published modules' main sources declare and reference, read as text: the public
 * top-level types outside {@code internal} packages (the API), and every reference from one module
 * to another module's {@code internal} package (which nothing may have). Text, not bytecode, so
 * that a violation is reported with its file and line and the check needs no compiled classes.
 */
final class ApiSurface {
  private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
  private static final Pattern PUBLIC_TYPE = Pattern.compile(
      "^public\\s+(?:(?:final|abstract|sealed|non-sealed|static|strictfp)\\s+)*(?:class|interface|record|enum|@interface)\\s+(\\w+)",
      Pattern.MULTILINE);
  private static final Pattern INTERNAL_REFERENCE = Pattern.compile("\\b(dev\\.idem\\.[\\w.]*?\\.internal)\\b");

  /** One reference from a module to another module's internals. */
  record Violation(String module, Path file, int line, String internalPackage, String owner) {
    @Override
    public String toString() {
      return module + ": " + file + ":" + line + " uses " + internalPackage + " of module " + owner
          + " (internal packages are for their own module only; make what it needs public API or an spi type)";
    }
  }

  private final Map<String, String> packageOwners = new TreeMap<>();
  private final Set<String> publicTypes = new TreeSet<>();
  private final List<Violation> violations = new ArrayList<>();

  private ApiSurface() {}

  /**
   * @param root the repository root
   * @param modules the published modules' folder names
   */
  static ApiSurface read(Path root, List<String> modules) {
    return read(root, modules, Set.of());
  }

  /**
   * @param root the repository root
   * @param modules the published modules' folder names
   * @param internalModules those of {@code modules} that are internal as a whole (see
   *     {@link ArchitectureTest#INTERNAL_MODULES}): none of their types is API, and other modules may
   *     use them
   */
  static ApiSurface read(Path root, List<String> modules, Set<String> internalModules) {
    ApiSurface s = new ApiSurface();
    Map<Path, String> moduleOf = new TreeMap<>();
    for (String module : modules) {
      Path src = root.resolve(module).resolve("src/main/java");
      if (!Files.isDirectory(src)) {
        throw new IllegalStateException("module " + module + " has no src/main/java at " + src);
      }
      for (Path file : javaFiles(src)) {
        moduleOf.put(file, module);
        String text = read(file);
        Matcher p = PACKAGE.matcher(text);
        String pkg = p.find() ? p.group(1) : "";
        s.packageOwners.putIfAbsent(pkg, module);
        if (!isInternal(pkg) && !internalModules.contains(module)
            && !file.getFileName().toString().equals("package-info.java")) {
          Matcher t = PUBLIC_TYPE.matcher(text);
          if (t.find()) {
            s.publicTypes.add(pkg + "." + t.group(1));
          }
        }
      }
    }
    for (Map.Entry<Path, String> e : moduleOf.entrySet()) {
      List<String> lines = readLines(e.getKey());
      for (int i = 0; i < lines.size(); i++) {
        Matcher m = INTERNAL_REFERENCE.matcher(lines.get(i));
        while (m.find()) {
          String owner = s.packageOwners.get(m.group(1));
          if (owner != null && !owner.equals(e.getValue())) {
            s.violations.add(new Violation(e.getValue(), root.relativize(e.getKey()), i + 1, m.group(1), owner));
          }
        }
      }
    }
    return s;
  }

  /** Public top-level types outside internal packages, as {@code package.Type}, sorted. */
  Set<String> publicTypes() {
    return publicTypes;
  }

  List<Violation> crossModuleInternalUses() {
    return violations;
  }

  /** Public API types per package, sorted by package. */
  Map<String, Integer> countsByPackage() {
    Map<String, Integer> counts = new TreeMap<>();
    for (String t : publicTypes) {
      counts.merge(t.substring(0, t.lastIndexOf('.')), 1, Integer::sum);
    }
    return counts;
  }

  private static boolean isInternal(String pkg) {
    return pkg.endsWith(".internal") || pkg.contains(".internal.");
  }

  private static List<Path> javaFiles(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(p -> p.toString().endsWith(".java")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<String> readLines(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
