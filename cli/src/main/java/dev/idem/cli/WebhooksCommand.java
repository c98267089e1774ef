package dev.idem.cli;

import static dev.idem.cli.TerminalText.safe;

import dev.idem.webhooks.InboxEntry;
import dev.idem.webhooks.InboxPage;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.WebhookInbox;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A webhook inbox: its dead letters and events by state, counted, and one dead letter re-driven (it
 * becomes PENDING, due now, and the app's processor hands the same event id to its handler again).
 * The listings open the inbox read-only ({@link WebhookInbox#openReadOnly}), beside the running
 * app; a re-drive opens it as its owner does, so it runs only while the app is stopped. The inbox
 * must already exist: a typo must not create an empty one.
 */
@Command(name = "webhooks",
    description = "List, count and re-drive the events of a webhook inbox.",
    subcommands = {WebhooksCommand.DeadLetters.class, WebhooksCommand.ListEvents.class, WebhooksCommand.Stats.class,
        WebhooksCommand.Redrive.class})
final class WebhooksCommand {
  /** A command on one inbox, given by {@code --inbox}. */
  abstract static class InboxCommand extends CliCommand {
    @Option(names = "--inbox", required = true, paramLabel = "DIR",
        description = "Directory of an embedded (SQLite) webhook inbox (WebhookInbox.sqlite).")
    Path dir;

    /** Read-only, beside the owner: no lock, nothing written. */
    WebhookInbox openReadOnly() {
      return WebhookInbox.openReadOnly(requireLocation(spec, "--inbox", dir));
    }

    /** As the owner: for a re-drive; refused while the app has the inbox open. */
    WebhookInbox openForWriting() {
      WebhookInbox.openReadOnly(requireLocation(spec, "--inbox", dir)).close(); // the same checks and messages: is an inbox there?
      return WebhookInbox.sqlite(dir).open();
    }
  }

  /** How a listing reads one page of an inbox: {@link WebhookInbox#page(InboxState, InboxEntry, int)}. */
  @FunctionalInterface
  interface PageReader {
    InboxPage read(WebhookInbox inbox, InboxState state, InboxEntry after, int limit);
  }

  /**
   * Lists the events in one state, oldest first, at most {@code --limit} of them, read-only, read
   * and printed a page of {@link ListCommand#PAGE} at a time.
   */
  abstract static class Listing extends InboxCommand {
    @Option(names = "--limit", defaultValue = "100", description = "At most this many (default: ${DEFAULT-VALUE}).")
    int limit;

    /** Rows read per query: bounded memory whatever --limit says. */
    private final int pageSize;
    private final PageReader pages;

    Listing() {
      this(ListCommand.PAGE, WebhookInbox::page);
    }

    /** For a test that watches the pages read. */
    Listing(int pageSize, PageReader pages) {
      this.pageSize = pageSize;
      this.pages = pages;
    }

    Integer list(InboxState state, String what) {
      requireLimit(limit);
      try (WebhookInbox in = openReadOnly()) {
        // A page at a time, each printed before the next is read: memory stays one page whatever
        // --limit says. The read-only inbox is one snapshot, so the pages and the count agree.
        int printed = 0;
        int damaged = 0;
        InboxEntry after = null;
        while (printed < limit && !outputFailed()) {
          int asked = Math.min(pageSize, limit - printed);
          InboxPage page = pages.read(in, state, after, asked);
          // A damaged event named in its place and the rest listed, as guard list does with a
          // record it cannot read: the processor makes a damaged event a dead letter on purpose,
          // so failing here hid every dead letter for as long as that one stayed.
          for (InboxEntry e : page.events()) {
            if (page.isDamaged(e)) {
              damagedLine(e);
            } else {
              line(e);
            }
          }
          damaged += page.damaged().size();
          printed += page.events().size();
          if (page.events().size() < asked) {
            break;
          }
          after = page.last().orElseThrow();
        }
        if (damaged > 0) {
          out().println(damaged + " event(s) cannot be read (damaged rows: the stored type or payload fails its"
              + " SHA-256 checksum, changed on disk after it was accepted): never handed to a handler; ask the"
              + " provider to resend it, or restore the inbox from a backup");
        }
        out().println(shown(printed, in.counts().get(state), what));
      }
      return 0;
    }

    /**
     * Names a damaged event: its identity and state can be read, its type may be the changed one,
     * so it is printed as stored, escaped, and marked.
     */
    private void damagedLine(InboxEntry e) {
      out().printf(Locale.ROOT, "%-10s %s %s %s state=%s received=%s (fails its checksum)%n", "DAMAGED",
          safe(e.source()), safe(e.eventId()), safe(e.eventType()), e.state(), e.receivedAt());
    }

    /**
     * Prints one event, never its payload (it may hold personal data). The id and type are the
     * sender's and the error is the handler's own (often built from the payload): escaped.
     */
    private void line(InboxEntry e) {
      out().printf(Locale.ROOT, "%-10s %s %s %s attempts=%d received=%s error=%s%n", e.state(), safe(e.source()),
          safe(e.eventId()), safe(e.eventType()), e.attempts(), e.receivedAt(), safe(e.lastError().orElse("-")));
    }
  }

  @Command(name = "dead-letters", description = "List dead letters, oldest first (read-only).")
  static final class DeadLetters extends Listing {
    DeadLetters() {}

    DeadLetters(int pageSize, PageReader pages) {
      super(pageSize, pages);
    }

    @Override
    public Integer call() {
      return list(InboxState.DEAD, "dead letter(s)");
    }
  }

  @Command(name = "list", description = "List events in one state, oldest first (read-only).")
  static final class ListEvents extends Listing {
    ListEvents() {}

    ListEvents(int pageSize, PageReader pages) {
      super(pageSize, pages);
    }

    @Option(names = "--state", required = true, description = "One of ${COMPLETION-CANDIDATES}, in any case.")
    InboxState state;

    @Override
    public Integer call() {
      return list(state, state + " event(s)");
    }
  }

  @Command(name = "stats", description = "Count events per state and show how long the oldest has waited (read-only).")
  static final class Stats extends InboxCommand {
    @Override
    public Integer call() {
      PrintWriter out = out();
      try (WebhookInbox in = openReadOnly()) {
        for (Map.Entry<InboxState, Long> c : in.counts().entrySet()) {
          out.printf(Locale.ROOT, "%-10s %d%n", c.getKey(), c.getValue());
        }
        if (in.queueLength() > 0) {
          out.println("oldest waiting: " + in.oldestWaiting().withNanos(0));
        }
      }
      return 0;
    }
  }

  @Command(name = "redrive", description = "Make a dead letter PENDING again; the processor runs its handler"
      + " again. Stop the app first: it owns the inbox while it runs.")
  static final class Redrive extends InboxCommand {
    @Option(names = "--source", required = true, description = "The webhook source's name, such as stripe.")
    String source;

    @Option(names = "--event-id", required = true, description = "The event id.")
    String eventId;

    @Override
    public Integer call() {
      if (source.isEmpty() || eventId.isEmpty()) {
        // Bad usage, not a missing event: a script that retries on 1 would retry a typo (an unset
        // shell variable), as the journal's commands refuse an empty --key.
        throw usage("--source and --event-id name no event an inbox can hold: "
            + (source.isEmpty() ? "--source" : "--event-id") + " is empty");
      }
      try (WebhookInbox in = openForWriting()) {
        if (!in.redrive(source, eventId)) {
          err().println(IdemCli.PREFIX + safe(source) + "/" + safe(eventId) + " is not a dead letter"
              + in.find(source, eventId).map(e -> " (it is " + e.state() + ")").orElse(" (no such event)"));
          return 1;
        }
        out().println("re-driven: " + safe(source) + "/" + safe(eventId) + " is PENDING; the app's processor hands it to its handler"
            + " again");
      }
      return 0;
    }
  }
}
