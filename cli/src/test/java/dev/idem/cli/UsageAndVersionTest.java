package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What an operator reads first: the version and the usage. */
class UsageAndVersionTest {
  @Test
  void versionIsTheBuildsNotANumberTypedByHand() {
    String expected = System.getProperty("idem.project.version");
    assertNotNull(expected, "surefire passes the POM's version");
    for (String flag : new String[] {"-V", "--version"}) {
      CliRun r = CliRun.of(flag);
      assertEquals(0, r.code(), r.err());
      assertEquals("idem " + expected, r.out().lines().findFirst().orElseThrow(), r.out());
    }
    assertTrue(CliRun.of("journal", "--version").out().startsWith("idem " + expected));
  }

  @Test
  void theJournalsUsageListsTheEmbeddedSqliteDirectoryFirstAndNoH2Option() {
    CliRun help = CliRun.of("journal", "stats", "--help");
    assertEquals(0, help.code(), help.err());
    String usage = help.out();
    int dir = usage.indexOf("--dir");
    int url = usage.indexOf("--jdbc-url");
    assertTrue(dir >= 0 && url > dir, "--dir (the embedded journal) before --jdbc-url:\n" + usage);
    assertTrue(usage.contains("embedded SQLite journal"), usage);
    assertFalse(usage.contains("--h2"), "the embedded journal is SQLite; --h2 is gone:\n" + usage);
    assertEquals(2, CliRun.of("journal", "stats", "--h2", "/tmp/x").code(), "--h2 is no longer an option");
  }

  @Test
  void theTopLevelUsageNamesTheThreeStores() {
    CliRun help = CliRun.of("--help");
    assertEquals(0, help.code());
    for (String command : new String[] {"journal", "webhooks", "guard"}) {
      assertTrue(help.out().contains(command), help.out());
    }
    CliRun none = CliRun.of();
    assertEquals(2, none.code(), "a command is required");
  }
}
