package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A mistyped option carrying a secret ({@code --pasword=hunter2}, {@code --pasword hunter2}) is bad
 * usage, and picocli's message quotes the argument whole: {@code Unknown option: '--pasword=hunter2'}
 * on standard error, which ends up in a CI log or a cron mail. The usage error names the option and
 * never shows the value, in the message or in what follows it (the suggestions, the usage).
 */
class MistypedSecretOptionTest {
  private static final String SECRET = "hunter2";

  static Stream<List<String>> commandLines() {
    List<List<String>> lines = new ArrayList<>();
    for (String command : List.of("list", "stats", "purge", "redrive")) {
      List<String> base = new ArrayList<>(List.of("journal", command, "--dir", "/nonexistent/idem"));
      if (command.equals("purge")) {
        base.addAll(List.of("--older-than", "P1D"));
      }
      if (command.equals("redrive")) {
        base.addAll(List.of("--operation", "o", "--key", "k"));
      }
      lines.add(with(base, "--pasword=" + SECRET));
      lines.add(with(base, "--pasword", SECRET));
      lines.add(with(base, "-pasword=" + SECRET));
      lines.add(with(base, "--passwrd", SECRET, "--user", "idem"));
      // --user takes the mistyped option as its value; the secret is left over on its own.
      lines.add(with(base, "--user", "--pasword", SECRET));
    }
    lines.add(List.of("journal", "show", "--dir", "/nonexistent/idem", "--operation", "o", "--key", "k",
        "--pasword=" + SECRET));
    // A mistyped command: picocli quotes everything after it, a well-typed --password included.
    lines.add(List.of("journal", "lst", "--dir", "/nonexistent/idem", "--password=" + SECRET));
    lines.add(List.of("journal", "lst", "--dir", "/nonexistent/idem", "--password", SECRET));
    lines.add(List.of("jornal", "list", "--password=" + SECRET));
    lines.add(List.of("--pasword=" + SECRET));
    // Any command's mistyped option: the CLI cannot know which hold secrets.
    lines.add(List.of("webhooks", "stats", "--inbox", "/nonexistent/inbox", "--tokn=" + SECRET));
    lines.add(List.of("guard", "stats", "--store", "/nonexistent/guard.db", "--secrt", SECRET));
    return lines.stream();
  }

  private static List<String> with(List<String> base, String... more) {
    List<String> line = new ArrayList<>(base);
    line.addAll(List.of(more));
    return line;
  }

  @ParameterizedTest
  @MethodSource("commandLines")
  void theValueOfAMistypedOptionIsNotPrinted(List<String> args) {
    CliRun run = CliRun.of(args.toArray(String[]::new));

    List<Executable> checks = new ArrayList<>();
    checks.add(() -> assertEquals(2, run.code(), run.err()));
    checks.add(() -> assertFalse(run.err().contains(SECRET), "the secret is printed: " + run.err()));
    checks.add(() -> assertFalse(run.out().contains(SECRET), "the secret is printed: " + run.out()));
    checks.add(() -> assertTrue(run.err().startsWith(IdemCli.PREFIX), run.err()));
    for (int i = 0; i < args.size(); i++) {
      String name = args.get(i).split("=", 2)[0];
      boolean mistyped = name.startsWith("-") && !name.equals("--password")
          && (name.contains("pas") || name.contains("tok") || name.contains("sec"));
      // After --user, the mistyped option is --user's value, not an option picocli could name.
      if (mistyped && !(i > 0 && args.get(i - 1).equals("--user"))) {
        checks.add(() -> assertTrue(run.err().contains(name + "'") || run.err().contains(name + "="),
            "the option is named: " + run.err()));
      }
    }
    assertAll(checks.stream());
  }
}
