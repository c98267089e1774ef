package dev.idem.examples.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.cli.IdemCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The demo explains itself: the same situation without Idem and with it, and what it checked. */
class DemoTest {
  @TempDir
  Path tmp;

  @Test
  void aScenarioShowsTheDuplicateANaiveRetryMakesAndTheOneIdemMakes() throws Exception {
    Path keep = tmp.resolve("journals");
    ScenarioResult r;
    try (DemoEnvironment env = new DemoEnvironment(keep)) {
      r = new LostResponseScenario().run(env);
    }
    assertTrue(r.ok(), r.violations().toString());
    assertEquals(2, r.withoutIdem().effects(), "the naive retry made a second order");
    assertEquals(1, r.effects(), "Idem's retry made none");
    assertTrue(r.checked().size() >= 5 && r.checked().stream().allMatch(l -> l.startsWith("ok      ")),
        r.checked().toString());

    String table = Demo.table(List.of(r));
    assertTrue(table.contains("without Idem") && table.contains("with Idem"), table);
    String invariants = Demo.invariants(List.of(r));
    assertTrue(invariants.contains("ok      server-side effects for the key: 1"), invariants);

    // --keep leaves the journal where the CLI can read it, with the operation's key.
    StringWriter out = new StringWriter();
    int code = IdemCli.run(new PrintWriter(out, true), new PrintWriter(new StringWriter(), true),
        "journal", "list", "--dir", keep.resolve("lost-response").toString());
    assertEquals(0, code);
    assertTrue(out.toString().contains(r.key()) && out.toString().contains("SUCCEEDED"), out.toString());
  }

  @Test
  void keepTakesAnArgumentOrTheMavenPropertyAndRefusesAnythingElse() {
    assertNull(Demo.keepDir(new String[0], ""));
    assertNull(Demo.keepDir(new String[] {""}, ""), "an unset Maven property arrives as an empty argument");
    assertEquals(Path.of("/x"), Demo.keepDir(new String[] {"--keep", "/x"}, ""));
    assertEquals(Path.of("/y"), Demo.keepDir(new String[0], "/y"));
    assertThrows(IllegalArgumentException.class, () -> Demo.keepDir(new String[] {"--kep", "/x"}, ""));
    assertThrows(IllegalArgumentException.class, () -> Demo.keepDir(new String[] {"--keep"}, ""));
  }

  @Test
  void keepRefusesADirectoryWithSomethingInIt() throws Exception {
    Files.writeString(tmp.resolve("old"), "x");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new DemoEnvironment(tmp));
    assertTrue(e.getMessage().contains("not empty"), e.getMessage());
  }
}
