package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.InboxEntry;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.PermanentWebhookException;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookProcessor;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The CLI's webhook commands: an operator lists the inbox's dead letters and re-drives one. */
class WebhooksCommandTest {
  // Not the all-zero key: HMAC pads a key with zeros, so that one is the empty key, and refused.
  private static final String SECRET = "whsec_aWRlbS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm";

  @TempDir
  Path dir;

  @Test
  void aDeadLetterIsListedAndReDrivenAndTheHandlerRunsItAgain() {
    Path inboxDir = dir.resolve("inbox");
    try (WebhookInbox inbox = WebhookInbox.sqlite(inboxDir).open()) {
      WebhookReceiver receiver = WebhookReceiver.builder(
          WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET).build(), inbox).build();
      Map<String, List<String>> headers = new TreeMap<>();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
      WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "evt_1", "order.paid", Instant.now(), body).headers()
          .forEach((k, v) -> headers.put(k, List.of(v)));
      assertEquals(200, receiver.handle("POST", headers, body).status());
      WebhookProcessor processor = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            throw new PermanentWebhookException("unknown order");
          }).build();
      processor.processDue(10);
      assertEquals(InboxState.DEAD, inbox.find("acme", "evt_1").orElseThrow().state());
    }

    CliRun list = run("webhooks", "dead-letters", "--inbox", inboxDir.toString());
    assertEquals(0, list.code(), list.err());
    assertTrue(list.out().contains("acme evt_1 order.paid") && list.out().contains("unknown order"), list.out());
    assertTrue(list.out().contains("1 dead letter(s)"), list.out());

    CliRun redrive = run("webhooks", "redrive", "--inbox", inboxDir.toString(), "--source", "acme", "--event-id",
        "evt_1");
    assertEquals(0, redrive.code(), redrive.err());
    CliRun again = run("webhooks", "redrive", "--inbox", inboxDir.toString(), "--source", "acme", "--event-id",
        "evt_1");
    assertEquals(1, again.code());
    assertTrue(again.err().contains("not a dead letter") && again.err().contains("PENDING"), again.err());

    AtomicInteger runs = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(inboxDir).open()) {
      WebhookProcessor.builder(inbox).handler("order.paid", e -> runs.incrementAndGet()).build().processDue(10);
      assertEquals(1, runs.get(), "the re-driven event reached its handler again, with the same id");
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
    }
  }

  /**
   * An empty --source or --event-id (an unset shell variable) names no event: bad usage, status 2,
   * as the journal's commands answer an empty --key, not 1 ("no such event"), which a script that
   * retries on 1 would retry. Review rcli. The inbox is neither opened nor created.
   */
  @Test
  void anEmptySourceOrEventIdIsBadUsage() {
    Path inboxDir = dir.resolve("inbox");
    try (WebhookInbox inbox = WebhookInbox.sqlite(inboxDir).open()) {
      assertEquals(0, inbox.list(InboxState.DEAD, null, 10).size());
    }
    for (String[] ids : new String[][] {{"", "evt_1"}, {"acme", ""}, {"", ""}}) {
      CliRun redrive = run("webhooks", "redrive", "--inbox", inboxDir.toString(), "--source", ids[0], "--event-id",
          ids[1]);
      assertEquals(2, redrive.code(), "source '" + ids[0] + "', event id '" + ids[1] + "': " + redrive.err());
      assertTrue(redrive.err().contains("--source") && redrive.err().contains("--event-id"), redrive.err());
    }
  }

  @Test
  void aDirectoryWithoutAnInboxIsRefusedAndNotCreated() {
    Path missing = dir.resolve("nope");
    CliRun r = run("webhooks", "dead-letters", "--inbox", missing.toString());
    assertEquals(1, r.code());
    assertTrue(r.err().contains("no webhook inbox at"), r.err());
    assertFalse(missing.toFile().exists());
  }

  /**
   * Review (2026-12-05): {@code webhooks list --limit N} read all N events in one call and held
   * them in one list before printing a line: with a large N on a big inbox, memory grew with N (the
   * journal's {@code list} reads pages of {@link ListCommand#PAGE}). The listing must read pages of
   * bounded size, and its output must be the same as one read's: every event, in order.
   */
  @Test
  void aListingLongerThanOnePageIsReadInBoundedPagesAndPrintsEveryEventInOrder() {
    Path inboxDir = dir.resolve("inbox");
    VirtualTime time = new VirtualTime(Instant.parse("2026-12-01T12:00:00Z"));
    try (WebhookInbox inbox = WebhookInbox.sqlite(inboxDir).clock(time.clock()).open()) {
      WebhookReceiver receiver = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
          .secret(SECRET).clock(time.clock()).build(), inbox).build();
      // Eight events, some in the same millisecond and out of id order: pages must split ties right.
      for (String id : List.of("evt_5", "evt_2", "evt_7", "evt_1", "evt_8", "evt_3", "evt_6", "evt_4")) {
        Map<String, List<String>> headers = new TreeMap<>();
        byte[] body = WebhookSigner.jsonEvent(id, "order.paid", "{}");
        WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, id, "order.paid", time.now(), body).headers()
            .forEach((k, v) -> headers.put(k, List.of(v)));
        assertEquals(200, receiver.handle("POST", headers, body).status());
        if (id.equals("evt_7") || id.equals("evt_3")) {
          time.advance(Duration.ofMillis(1));
        }
      }
    }
    List<String> expectedOrder = List.of("evt_2", "evt_5", "evt_7", "evt_1", "evt_3", "evt_8", "evt_4", "evt_6");

    List<Integer> asked = new ArrayList<>();
    WebhooksCommand.PageReader watched = (in, state, after, n) -> {
      asked.add(n);
      return in.page(state, after, n);
    };
    String all = listPending(new WebhooksCommand.ListEvents(3, watched), inboxDir, "100");
    String oneRead = listPending(new WebhooksCommand.ListEvents(1000, WebhookInbox::page), inboxDir, "100");

    assertEquals(oneRead, all, "the same output as one read of every event");
    assertEquals(expectedOrder, idsIn(all), all);
    assertTrue(all.endsWith("8 PENDING event(s)" + System.lineSeparator()), all);
    assertTrue(asked.size() > 1 && asked.stream().allMatch(n -> n <= 3), "pages asked for: " + asked);

    asked.clear();
    String cut = listPending(new WebhooksCommand.ListEvents(3, watched), inboxDir, "7");
    assertEquals(expectedOrder.subList(0, 7), idsIn(cut), cut);
    assertTrue(cut.contains("7 of 8 PENDING event(s) shown; raise --limit to see more"), cut);
    assertEquals(List.of(3, 3, 1), asked, "no page reads past --limit");
  }

  private static String listPending(WebhooksCommand.ListEvents command, Path inboxDir, String limit) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = new CommandLine(command).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
        .execute("--inbox", inboxDir.toString(), "--state", "PENDING", "--limit", limit);
    assertEquals(0, code, err.toString());
    return out.toString();
  }

  /** The event ids of a listing's lines, in the order printed. */
  private static List<String> idsIn(String listing) {
    return listing.lines().filter(l -> l.startsWith("PENDING ")).map(l -> l.split(" +")[2]).toList();
  }

  private static CliRun run(String... args) {
    return CliRun.of(args);
  }
}
