package dev.idem.examples.cli;

import dev.idem.webhooks.InboxEntry;
import dev.idem.webhooks.WebhookInbox;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The webhook inbox's dead letters: list them, and re-drive one (it becomes PENDING, due now, and
 * the app's processor hands the same event id to its handler again). On an embedded inbox's
 * directory, which must already hold an inbox: a typo must not create an empty one.
 */
@Command(name = "webhooks", description = "List and re-drive the dead letters of a webhook inbox.",
    subcommands = {WebhooksCommand.DeadLetters.class, WebhooksCommand.Redrive.class})
final class WebhooksCommand {
  /** Where the inbox is; shared by the subcommands. */
  static final class InboxOptions {
    @Option(names = "--inbox", required = true, paramLabel = "DIR",
        description = "Directory of an embedded webhook inbox (WebhookInbox.sqlite).")
    Path dir;

    WebhookInbox open() {
      if (Files.isRegularFile(dir)) {
        throw new IllegalArgumentException(dir + " is a file; give the inbox's directory (it holds inbox.db)");
      }
      if (!Files.isRegularFile(dir.resolve("inbox.db"))) {
        throw new IllegalArgumentException("no webhook inbox at " + dir + ": it has no inbox.db");
      }
      return WebhookInbox.sqlite(dir).open();
    }
  }

  @Command(name = "dead-letters", description = "List dead letters, oldest first.")
  static final class DeadLetters implements Callable<Integer> {
    @picocli.CommandLine.Mixin
    InboxOptions inbox = new InboxOptions();

    @Option(names = "--limit", defaultValue = "100", description = "At most this many (default: ${DEFAULT-VALUE}).")
    int limit;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      if (limit < 1) {
        throw new ParameterException(spec.commandLine(), "--limit must be at least 1: " + limit);
      }
      PrintWriter out = spec.commandLine().getOut();
      try (WebhookInbox in = inbox.open()) {
        int n = 0;
        for (InboxEntry e : in.deadLetters(limit)) {
          // Never the payload: it may hold personal data; the error is the handler's own message.
          out.printf("%s %s %s attempts=%d received=%s error=%s%n", e.source(), e.eventId(), e.eventType(),
              e.attempts(), e.receivedAt(), e.lastError().orElse("-"));
          n++;
        }
        out.println(n + " dead letter(s)");
      }
      return 0;
    }
  }

  @Command(name = "redrive", description = "Make a dead letter PENDING again; the processor runs its handler again.")
  static final class Redrive implements Callable<Integer> {
    @picocli.CommandLine.Mixin
    InboxOptions inbox = new InboxOptions();

    @Option(names = "--source", required = true, description = "The webhook source's name, such as stripe.")
    String source;

    @Option(names = "--event-id", required = true, description = "The event id.")
    String eventId;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
      try (WebhookInbox in = inbox.open()) {
        if (!in.redrive(source, eventId)) {
          spec.commandLine().getErr().println("idem-journal: " + source + "/" + eventId + " is not a dead letter"
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
