package dev.idem.cli;

import dev.idem.webhooks.InboxEntry;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.WebhookInbox;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

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
  /** Where the inbox is; shared by the subcommands. */
  static final class InboxOptions {
    @Option(names = "--inbox", required = true, paramLabel = "DIR",
        description = "Directory of an embedded (SQLite) webhook inbox (WebhookInbox.sqlite).")
    Path dir;

    /** Read-only, beside the owner: no lock, nothing written. */
    WebhookInbox openReadOnly() {
      return WebhookInbox.openReadOnly(dir);
    }

    /** As the owner: for a re-drive; refused while the app has the inbox open. */
    WebhookInbox openForWriting() {
      WebhookInbox.openReadOnly(dir).close(); // the same checks and messages: is an inbox there?
      return WebhookInbox.sqlite(dir).open();
    }
  }

  /** Prints one event, never its payload (it may hold personal data); the error is the handler's own. */
  static void line(PrintWriter out, InboxEntry e) {
    out.printf("%-10s %s %s %s attempts=%d received=%s error=%s%n", e.state(), e.source(), e.eventId(),
        e.eventType(), e.attempts(), e.receivedAt(), e.lastError().orElse("-"));
  }

  static void checkLimit(CommandSpec spec, int limit) {
    if (limit < 1) {
      throw new ParameterException(spec.commandLine(), "--limit must be at least 1, not " + limit);
    }
  }

  @Command(name = "dead-letters", description = "List dead letters, oldest first (read-only).")
  static final class DeadLetters implements Callable<Integer> {
    @Mixin
    InboxOptions inbox = new InboxOptions();

    @Option(names = "--limit", defaultValue = "100", description = "At most this many (default: ${DEFAULT-VALUE}).")
    int limit;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      checkLimit(spec, limit);
      PrintWriter out = spec.commandLine().getOut();
      try (WebhookInbox in = inbox.openReadOnly()) {
        List<InboxEntry> dead = in.deadLetters(limit);
        dead.forEach(e -> line(out, e));
        long total = in.counts().get(InboxState.DEAD);
        out.println(dead.size() == total ? total + " dead letter(s)"
            : dead.size() + " of " + total + " dead letter(s) shown; raise --limit to see more");
      }
      return 0;
    }
  }

  @Command(name = "list", description = "List events in one state, oldest first (read-only).")
  static final class ListEvents implements Callable<Integer> {
    @Mixin
    InboxOptions inbox = new InboxOptions();

    @Option(names = "--state", required = true, description = "One of ${COMPLETION-CANDIDATES}, in any case.")
    InboxState state;

    @Option(names = "--limit", defaultValue = "100", description = "At most this many (default: ${DEFAULT-VALUE}).")
    int limit;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      checkLimit(spec, limit);
      PrintWriter out = spec.commandLine().getOut();
      try (WebhookInbox in = inbox.openReadOnly()) {
        List<InboxEntry> events = in.list(state, limit);
        events.forEach(e -> line(out, e));
        long total = in.counts().get(state);
        out.println(events.size() == total ? total + " " + state + " event(s)"
            : events.size() + " of " + total + " " + state + " event(s) shown; raise --limit to see more");
      }
      return 0;
    }
  }

  @Command(name = "stats", description = "Count events per state and show how long the oldest has waited (read-only).")
  static final class Stats implements Callable<Integer> {
    @Mixin
    InboxOptions inbox = new InboxOptions();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      try (WebhookInbox in = inbox.openReadOnly()) {
        for (Map.Entry<InboxState, Long> c : in.counts().entrySet()) {
          out.printf("%-10s %d%n", c.getKey(), c.getValue());
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
  static final class Redrive implements Callable<Integer> {
    @Mixin
    InboxOptions inbox = new InboxOptions();

    @Option(names = "--source", required = true, description = "The webhook source's name, such as stripe.")
    String source;

    @Option(names = "--event-id", required = true, description = "The event id.")
    String eventId;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      try (WebhookInbox in = inbox.openForWriting()) {
        if (!in.redrive(source, eventId)) {
          spec.commandLine().getErr().println(IdemCli.PREFIX + source + "/" + eventId + " is not a dead letter"
              + in.find(source, eventId).map(e -> " (it is " + e.state() + ")").orElse(" (no such event)"));
          return 1;
        }
        spec.commandLine().getOut().println("re-driven: " + source + "/" + eventId
            + " is PENDING; the app's processor hands it to its handler again");
      }
      return 0;
    }
  }
}
