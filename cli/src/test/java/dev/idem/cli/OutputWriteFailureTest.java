package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.ChildProcesses;
import dev.idem.webhooks.InboxEntry;
import dev.idem.webhooks.InboxPage;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.WebhookInbox;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Standard output that cannot be written: a full disk fails the command (status 3, one line on
 * standard error), a reader that stopped ({@code | head -1}) ends it quietly with its own status,
 * and after the first failed write nothing more is written and a listing stops reading its store.
 */
class OutputWriteFailureTest {
  /** Over 64 KiB (a Linux pipe's buffer) plus what the reading side buffers, several times over. */
  private static final int ROWS = 600;

  @TempDir
  Path dir;

  @Test
  void aFullDiskExitsWithStatusThreeAndOneLineNamingTheFailure() throws Exception {
    File full = new File("/dev/full");
    assumeTrue(full.exists(), "needs Linux's /dev/full, a file every write to fails with ENOSPC");
    Path journal = journalOf(3);
    Path err = dir.resolve("err.txt");
    ProcessBuilder pb = cli("journal", "list", "--dir", journal.toString()).redirectOutput(full).redirectError(err.toFile());
    pb.environment().put("LC_ALL", "C"); // strerror's text in English, to read it below
    try (ChildProcesses children = new ChildProcesses()) { // a CLI that does not end is not left running
      Process p = children.add(pb.start());
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the CLI did not end");
      List<String> lines = Files.readAllLines(err, StandardCharsets.UTF_8);
      assertEquals(OutputFailure.STATUS, p.exitValue(), "stderr: " + lines);
      assertEquals(List.of("idem: standard output could not be written (No space left on device): what was printed"
          + " is incomplete"), lines);
    }
  }

  @Test
  void aReaderThatStopsAfterTheFirstLineEndsTheListingQuietlyWithStatusZero() throws Exception {
    Path journal = journalOf(ROWS);
    Path err = dir.resolve("err.txt");
    try (ChildProcesses children = new ChildProcesses()) { // a CLI that does not end is not left running
      Process p = children.add(cli("journal", "list", "--dir", journal.toString(), "--limit", String.valueOf(ROWS))
          .redirectError(err.toFile()).start());
      // As "| head -1": read one line and go. The rest (over 200 KB) cannot fit in the pipe, so
      // the CLI's writes meet a closed pipe (EPIPE) whatever the timing.
      try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String first = out.readLine();
        assertTrue(first != null && first.startsWith("PENDING"), "first line: " + first);
      }
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the CLI did not end after its reader left");
      String stderr = Files.readString(err, StandardCharsets.UTF_8);
      assertEquals(0, p.exitValue(), "stderr: " + stderr);
      assertEquals("", stderr, "a reader that stopped is not an error");
    }
  }

  @Test
  void afterTheFirstFailedWriteNothingMoreReachesTheStream() {
    IOException full = new IOException("No space left on device");
    AtomicInteger writes = new AtomicInteger();
    OutputStream disk = new OutputStream() {
      @Override
      public void write(int b) throws IOException {
        writes.incrementAndGet();
        throw full;
      }
    };
    FailureRecordingOutputStream stdout = new FailureRecordingOutputStream(disk);
    assertEquals(Optional.empty(), stdout.failure());
    assertSame(full, assertThrows(IOException.class, () -> stdout.write('a')));
    assertSame(full, assertThrows(IOException.class, () -> stdout.write(new byte[] {'b', 'c'}, 0, 2)));
    assertSame(full, assertThrows(IOException.class, stdout::flush));
    assertEquals(1, writes.get(), "one write reached the disk: the one that failed");
    assertSame(full, stdout.failure().orElseThrow());
  }

  @Test
  void aBrokenPipeKeepsTheStatusAndSaysNothingWhileAnyOtherFailureIsStatusThreeAndOneLine() {
    StringWriter err = new StringWriter();
    PrintWriter errs = new PrintWriter(err, true);
    assertEquals(0, OutputFailure.exitStatus(0, Optional.empty(), () -> false, errs));
    assertEquals(0, OutputFailure.exitStatus(0, Optional.of(new IOException("Broken pipe")), () -> false, errs));
    assertEquals(1, OutputFailure.exitStatus(1, Optional.of(new IOException("Broken pipe")), () -> false, errs),
        "a reader gone changes no status, a failed one included");
    // strerror follows the locale: the file type says it when the words do not.
    assertEquals(0, OutputFailure.exitStatus(0, Optional.of(new IOException("Relais brisé (pipe)")), () -> true, errs));
    assertEquals("", err.toString());

    assertEquals(OutputFailure.STATUS,
        OutputFailure.exitStatus(0, Optional.of(new IOException("No space left on device")), () -> false, errs));
    assertEquals("idem: standard output could not be written (No space left on device): what was printed is"
        + " incomplete", err.toString().strip());
    assertEquals(1, OutputFailure.exitStatus(1, Optional.of(new IOException("Input/output error")), () -> false, errs),
        "a command that already failed keeps its status");
    assertEquals(2, err.toString().lines().count(), err.toString());
  }

  @Test
  void aListingStopsReadingPagesAtTheFirstFailedWrite() {
    Path inbox = dir.resolve("inbox");
    WebhookInbox.sqlite(inbox).open().close();
    List<Integer> asked = new ArrayList<>();
    WebhooksCommand.PageReader endless = (in, state, after, n) -> {
      asked.add(n);
      return new InboxPage(IntStream.range(0, n).mapToObj(i -> new InboxEntry("acme", "evt_" + asked.size() + "_" + i,
          "order.paid", state, 1, 1, Instant.EPOCH, Instant.EPOCH, Optional.empty(), Optional.empty())).toList());
    };
    Writer dead = new Writer() {
      @Override
      public void write(char[] cbuf, int off, int len) throws IOException {
        throw new IOException("Broken pipe");
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };

    new CommandLine(new WebhooksCommand.ListEvents(3, endless)).setOut(new PrintWriter(new StringWriter(), true))
        .execute("--inbox", inbox.toString(), "--state", "PENDING", "--limit", "30");
    assertEquals(10, asked.size(), "a healthy output reads every page up to --limit");

    asked.clear();
    new CommandLine(new WebhooksCommand.ListEvents(3, endless)).setOut(new PrintWriter(dead, true))
        .execute("--inbox", inbox.toString(), "--state", "PENDING", "--limit", "30");
    assertEquals(List.of(3), asked, "no page read after a write failed");
  }

  private Path journalOf(int rows) throws Exception {
    Path journal = dir.resolve("journal");
    RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
    String longKey = "k".repeat(IdempotencyKey.MAX_LENGTH - 6);
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      for (int i = 0; i < rows; i++) {
        j.begin(new NewOperation(new OperationId("t", "create-order", IdempotencyKey.of(longKey + "-" + i)), null,
            Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
      }
    }
    return journal;
  }

  /** The CLI's main in a child JVM, so that its standard output is a real file or pipe. */
  private static ProcessBuilder cli(String... args) {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        ChildCli.NATIVE_ACCESS, "-cp", System.getProperty("java.class.path"), IdemCli.class.getName()));
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd);
  }
}
