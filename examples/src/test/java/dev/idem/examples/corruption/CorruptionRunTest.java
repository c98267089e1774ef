package dev.idem.examples.corruption;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The corruption run (issue 26): each of the three stores (the client's embedded journal, the
 * guard's SQLite store, the webhook inbox) is filled with acknowledged records, closed cleanly or
 * killed (a child JVM halts with its commits in the {@code -wal}), and then damaged: the database
 * deleted, truncated, a byte flipped, a page zeroed; the {@code -wal} deleted, cut at a frame, one
 * frame's page, salt or whole frame damaged at every position; the {@code -shm} deleted or zeroed.
 *
 * <p>Each trial opens the damaged copy as the app would and reads every record, and is classified:
 * <b>refused</b> (the open or a read failed with an error), <b>recovered</b> (every record reads as
 * in the undamaged copy, or is refused with an explanation, as a quarantine is), or <b>silent</b>
 * (it opened, and a record is missing or reads differently, without a word). A silent trial whose
 * damage the docs name as not detectable (a store's last transaction in its {@code -wal}) is
 * counted apart, as <b>limit</b>. The test fails on any silent trial, in any of the three stores.
 *
 * <p>Every build runs a sample ({@code idem.corruption.sample}, default 3 positions per kind);
 * {@code -Pcorruption} in examples runs every position (see docs/operations.md).
 */
class CorruptionRunTest {
  static final List<Subject> SUBJECTS = List.of(new JournalSubject(), new GuardSubject(), new InboxSubject());
  private static final int SAMPLE = Integer.getInteger("idem.corruption.sample", 3);

  enum Outcome { REFUSED, RECOVERED, LIMIT, SILENT }

  @TempDir
  Path tmp;

  @Test
  void damageIsRefusedOrRecoveredNeverSilent() throws Exception {
    Map<String, Map<Outcome, Integer>> table = new TreeMap<>();
    List<String> silent = new ArrayList<>();
    int trials = 0;
    for (Subject subject : SUBJECTS) {
      for (boolean killed : new boolean[] {false, true}) {
        Path template = template(subject, killed);
        Map<String, String> baseline = subject.read(copy(template, "baseline-" + template.getFileName()));
        assertEquals(40, baseline.size(), subject.name() + ": the undamaged copy reads every record");
        assertTrue(baseline.values().stream().noneMatch(v -> v.equals(Subject.SAID) || v.equals("missing")),
            subject.name() + ": the undamaged copy " + baseline);
        for (Damage damage : damages(subject, template, killed)) {
          Outcome outcome = trial(subject, template, damage, baseline, killed, silent);
          table.computeIfAbsent(subject.name() + " | " + (killed ? "kill -9" : "clean close") + " | "
              + damage.kind(), k -> new EnumMap<>(Outcome.class)).merge(outcome, 1, Integer::sum);
          trials++;
        }
      }
    }
    print(table, trials);
    silent.stream().limit(60).forEach(s -> System.out.println("silent: " + s.substring(0, Math.min(300, s.length()))));
    assertTrue(trials >= SUBJECTS.size() * 2 * 5, "trials run: " + trials);
    assertEquals(List.of(), silent, "silent outcomes outside the documented limits, in any of the three stores");
  }

  private Outcome trial(Subject subject, Path template, Damage damage, Map<String, String> baseline, boolean killed,
      List<String> silent) throws Exception {
    Path dir = copy(template, subject.name() + "-" + (killed ? "k-" : "c-") + damage.toString().replace('@', '-'));
    Path db = dir.resolve(subject.databaseFile());
    boolean inLastTransaction = false;
    if (damage.kind().framed()) {
      int[] frames = Damage.frames(db.resolveSibling(db.getFileName() + "-wal"));
      inLastTransaction = damage.position() >= frames[1]
          || (damage.kind() == Damage.Kind.WAL_ZERO_FRAME && damage.position() == frames[2])
          || damage.kind() == Damage.Kind.WAL_CUT_AT_FRAME;
    }
    damage.apply(db);
    Map<String, String> picture;
    try {
      picture = subject.read(dir);
    } catch (Exception | AssertionError e) {
      return Outcome.REFUSED;
    }
    List<String> differences = new ArrayList<>();
    baseline.forEach((record, was) -> {
      String now = picture.get(record);
      if (!was.equals(now) && !Subject.SAID.equals(now)) {
        differences.add(record + ": " + was + " -> " + now);
      }
    });
    if (differences.isEmpty()) {
      return Outcome.RECOVERED;
    }
    // The three stores open through one storage layer with one -wal check: the limit docs/journal.md
    // states for the journal (damage to the last transaction, without a -shm index that says more
    // was committed) is docs/operations.md's limit for the guard's store and the inbox too.
    boolean documented = inLastTransaction;
    if (!documented) {
      silent.add(subject.name() + " " + (killed ? "killed" : "clean") + " " + damage + ": " + differences);
    }
    return documented ? Outcome.LIMIT : Outcome.SILENT;
  }

  /**
   * The damages tried on one store: every kind, at SAMPLE positions each; with -Pcorruption (SAMPLE
   * 0) every page and every frame, and 48 flipped bytes.
   */
  private static List<Damage> damages(Subject subject, Path template, boolean killed) throws Exception {
    Path db = template.resolve(subject.databaseFile());
    long size = Files.size(db);
    int pages = (int) (size / Damage.PAGE);
    int frames = killed ? Damage.frames(db.resolveSibling(db.getFileName() + "-wal"))[0] : 0;
    Random random = new Random(subject.name().hashCode() * 31L + (killed ? 1 : 0));
    List<Damage> out = new ArrayList<>();
    for (Damage.Kind kind : Damage.Kind.values()) {
      if (kind.killedOnly && !killed) {
        continue;
      }
      switch (kind) {
        case DB_FLIP -> positions(SAMPLE > 0 ? SAMPLE * 4 : 48, (int) size, random)
            .forEach(p -> out.add(new Damage(kind, p)));
        case DB_ZERO_PAGE -> positions(SAMPLE, pages, random).forEach(p -> out.add(new Damage(kind, p)));
        case WAL_CUT_AT_FRAME, WAL_FLIP_FRAME, WAL_ZERO_FRAME, WAL_SALT_FRAME ->
            positions(SAMPLE, frames, random).forEach(p -> out.add(new Damage(kind, p)));
        default -> out.add(new Damage(kind, 0));
      }
    }
    return out;
  }

  /** {@code count} distinct positions below {@code bound}, or every one if count reaches it (0 = all). */
  private static List<Long> positions(int count, int bound, Random random) {
    List<Long> all = new ArrayList<>();
    for (long i = 0; i < bound; i++) {
      all.add(i);
    }
    if (count <= 0 || count >= bound) {
      return all;
    }
    java.util.Collections.shuffle(all, random);
    return all.subList(0, count).stream().sorted().toList();
  }

  private Path template(Subject subject, boolean killed) throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("template-" + subject.name() + (killed ? "-killed" : "-clean")));
    if (killed) {
      ChildJvm.Result child = ChildJvm.run(tmp, FixtureChild.class, subject.name(), dir.toString());
      assertEquals(Subject.HALT_CODE, child.exitCode(), child.output());
      assertTrue(Files.size(dir.resolve(subject.databaseFile() + "-wal")) > 0, subject.name() + ": commits in the -wal");
    } else {
      subject.writeAndClose(dir);
    }
    return dir;
  }

  private Path copy(Path template, String name) throws Exception {
    Path copy = Files.createDirectories(tmp.resolve(name));
    try (Stream<Path> files = Files.list(template)) {
      for (Path f : files.toList()) {
        if (Files.isRegularFile(f) && !f.getFileName().toString().endsWith(".lock")) {
          Files.copy(f, copy.resolve(f.getFileName()));
        }
      }
    }
    return copy;
  }

  private static void print(Map<String, Map<Outcome, Integer>> table, int trials) {
    StringBuilder out = new StringBuilder("\nCorruption run: " + trials + " trials\n");
    out.append(String.format("%-40s %8s %9s %6s %7s%n", "store | state | damage", "refused", "recovered", "limit",
        "silent"));
    Map<String, int[]> totals = new TreeMap<>();
    table.forEach((row, counts) -> {
      out.append(String.format("%-40s %8d %9d %6d %7d%n", row, counts.getOrDefault(Outcome.REFUSED, 0),
          counts.getOrDefault(Outcome.RECOVERED, 0), counts.getOrDefault(Outcome.LIMIT, 0),
          counts.getOrDefault(Outcome.SILENT, 0)));
      int[] t = totals.computeIfAbsent(row.substring(0, row.indexOf(' ')), k -> new int[4]);
      for (Outcome o : Outcome.values()) {
        t[o.ordinal()] += counts.getOrDefault(o, 0);
      }
    });
    totals.forEach((store, t) -> out.append(String.format("%-40s %8d %9d %6d %7d%n", store + " (all)", t[0], t[1],
        t[2], t[3])));
    System.out.println(out);
  }
}
