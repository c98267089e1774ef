package dev.idem.examples.readme;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Wraps each README block in a compilation unit (the block's own leading imports first, then the
 * preamble's imports, a class holding the preamble's members, and the block as a method body or as
 * members) and compiles them all in one javac run against the test class path. Errors are reported
 * with the README line they point at.
 */
final class SnippetCompiler {
  private SnippetCompiler() {}

  /**
   * @param outputDir where the class files go (a temp dir: nothing is loaded or run)
   * @return for each block, in order, its errors as "README.md line N: message" (empty: compiled)
   */
  static Map<ReadmeBlock, List<String>> compile(Map<ReadmeBlock, Preamble> blocks, Path outputDir) {
    return compile(blocks, outputDir, null);
  }

  /**
   * As {@link #compile(Map, Path)}, and also writes each generated compilation unit to
   * {@code sourcesDir/readme/ClassName.java}, so that the packaging test can compile the same
   * snippets again against the published artifacts, outside this build.
   *
   * @param sourcesDir where to write the sources, or null not to
   * @return for each block, in order, its errors
   */
  static Map<ReadmeBlock, List<String>> compile(Map<ReadmeBlock, Preamble> blocks, Path outputDir, Path sourcesDir) {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    if (javac == null) {
      throw new IllegalStateException("no system Java compiler: the tests must run on a JDK");
    }
    Map<ReadmeBlock, Unit> units = new LinkedHashMap<>();
    blocks.forEach((block, preamble) -> units.put(block, Unit.of(block, preamble)));
    if (sourcesDir != null) {
      try {
        Path dir = Files.createDirectories(sourcesDir.resolve("readme"));
        for (Unit u : units.values()) {
          Files.writeString(dir.resolve(u.className + ".java"), String.join("\n", u.text) + "\n");
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
      List<String> options = List.of(
          "-classpath", System.getProperty("java.class.path"),
          "-d", outputDir.toString(),
          "--release", "17",
          "-proc:none",
          // By default one block's syntax error stops javac before it attributes any other block,
          // which would then pass unchecked; this keeps it going through every unit.
          "-XDshould-stop.ifError=FLOW",
          "-Xlint:none");
      List<JavaFileObject> sources = new ArrayList<>();
      units.values().forEach(u -> sources.add(u.source));
      javac.getTask(null, files, diagnostics, options, null, sources).call();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<ReadmeBlock, List<String>> errors = new LinkedHashMap<>();
    units.forEach((block, unit) -> errors.put(block, new ArrayList<>()));
    for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
      if (d.getKind() != Diagnostic.Kind.ERROR) {
        continue;
      }
      for (Map.Entry<ReadmeBlock, Unit> e : units.entrySet()) {
        if (e.getValue().source == d.getSource()) {
          errors.get(e.getKey()).add(e.getValue().describe(d));
        }
      }
      if (d.getSource() == null) {
        errors.values().forEach(list -> list.add("javac: " + d.getMessage(Locale.ROOT)));
      }
    }
    return errors;
  }

  /** One generated source, and for each of its lines the README line it came from (0: preamble). */
  private static final class Unit {
    final JavaFileObject source;
    final List<Integer> readmeLines;
    final List<String> text;
    final String file;
    final String className;

    private Unit(String file, String className, List<String> text, List<Integer> readmeLines) {
      this.file = file;
      this.className = className;
      this.text = text;
      this.readmeLines = readmeLines;
      String code = String.join("\n", text) + "\n";
      this.source = new SimpleJavaFileObject(
          URI.create("string:///readme/" + className + ".java"), JavaFileObject.Kind.SOURCE) {
        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
          return code;
        }
      };
    }

    static Unit of(ReadmeBlock block, Preamble preamble) {
      String className = block.file().replaceAll("[^A-Za-z0-9]", "_") + "Line" + block.firstLine();
      List<String> text = new ArrayList<>();
      List<Integer> from = new ArrayList<>();
      text.add("package readme;");
      from.add(0);
      int body = 0;
      // The block's own imports can only go at the top of the unit.
      while (body < block.lines().size()) {
        String line = block.lines().get(body).strip();
        if (!line.isEmpty() && !line.startsWith("import ")) {
          break;
        }
        text.add(block.lines().get(body));
        from.add(block.firstLine() + body);
        body++;
      }
      for (String line : preamble.imports()) {
        text.add(line);
        from.add(0);
      }
      text.add("@SuppressWarnings(\"all\") class " + className + " {");
      from.add(0);
      for (String line : preamble.members()) {
        text.add("  " + line);
        from.add(0);
      }
      boolean statements = preamble.shape() == Preamble.Shape.STATEMENTS;
      if (statements) {
        text.add("  void snippet() throws Exception {");
        from.add(0);
      }
      for (int i = body; i < block.lines().size(); i++) {
        text.add(block.lines().get(i));
        from.add(block.firstLine() + i);
      }
      if (statements) {
        text.add("  }");
        from.add(0);
      }
      text.add("}");
      from.add(0);
      return new Unit(block.file(), className, text, from);
    }

    String describe(Diagnostic<? extends JavaFileObject> d) {
      int line = (int) d.getLineNumber();
      String message = d.getMessage(Locale.ROOT);
      if (line >= 1 && line <= readmeLines.size() && readmeLines.get(line - 1) > 0) {
        return file + " line " + readmeLines.get(line - 1) + ": " + message;
      }
      // An error outside the block: in the closing braces just after it (a missing ';' or '}'),
      // or in the preamble.
      int last = readmeLines.size() - 1;
      while (last >= 0 && readmeLines.get(last) == 0) {
        last--;
      }
      if (last >= 0 && line - 1 > last) {
        return file + " after line " + readmeLines.get(last) + ": " + message;
      }
      return "generated line " + line + " (not from " + file + "): " + message
          + "\n--- generated source ---\n" + String.join("\n", text);
    }
  }
}
