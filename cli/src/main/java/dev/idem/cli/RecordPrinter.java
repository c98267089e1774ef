package dev.idem.cli;

import static dev.idem.cli.TerminalText.safe;

import dev.idem.core.AttemptRecord;
import dev.idem.core.OperationRecord;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.OperationSummary;
import java.io.PrintWriter;
import java.net.URI;
import java.util.Locale;

/**
 * Prints records for operators. Header values and bodies are never printed: the journal holds no
 * secrets by design, but bodies may still carry personal data. Every text field goes through
 * {@link TerminalText#safe}: a scope, a name, a reference or a reason is whatever the app gave.
 */
final class RecordPrinter {
  private RecordPrinter() {}

  static void line(PrintWriter out, OperationSummary r) {
    // Locale.ROOT here and in every format of the CLI: counts in ASCII digits whatever the host's
    // locale (fa_IR prints %d as Persian digits), so that a script reading the output can parse them.
    out.printf(Locale.ROOT, "%-10s %-12s %-28s %-40s attempts=%d created=%s%s%n", r.state(),
        safe(r.id().scope()), safe(r.id().operation()), safe(r.id().key()), r.attemptCount(), r.createdAt(),
        r.appReference().map(ref -> " ref=" + safe(ref)).orElse(""));
  }

  /**
   * The journaled URI without user info or fragment, and with the value of each credential its
   * path or query holds replaced by {@code redacted}, the name kept
   * ({@link RequestSnapshot#redactedQuery}, the executor's own rule): the
   * executor keeps all of them out of the journal, but a journal written by an older version may
   * hold them. The rest of the query stays: it is part of the request's identity.
   */
  private static String shown(URI uri) {
    String query = uri.getRawQuery();
    return RequestSnapshot.redactedUri(uri) + (query == null ? "" : "?" + RequestSnapshot.redactedQuery(query));
  }

  static void detail(PrintWriter out, OperationRecord r) {
    out.println("operation:  " + safe(r.id().operation()));
    out.println("scope:      " + safe(r.id().scope()));
    out.println("key:        " + safe(r.id().key()));
    r.appReference().ifPresent(ref -> out.println("reference:  " + safe(ref)));
    out.println("state:      " + r.state() + (r.reason() != null ? " (" + safe(r.reason()) + ")" : ""));
    out.println("request:    " + safe(r.request().method()) + " " + safe(shown(r.request().uri())) + ", "
        + r.request().bodyLength() + " body bytes, headers " + safe(r.request().headers().keySet()));
    out.println("fingerprint " + safe(r.fingerprint()));
    out.println("created:    " + r.createdAt() + ", updated " + r.updatedAt());
    if (r.nextAttemptAt() != null) {
      out.println("next at:    " + r.nextAttemptAt());
    }
    if (r.owner() != null) {
      out.println("owner:      " + safe(r.owner()) + " generation " + r.generation()
          + (r.leaseExpiresAt() != null ? ", lease until " + r.leaseExpiresAt() : ""));
    }
    r.storedResponse().ifPresent(resp -> out.println("response:   " + resp));
    out.println("attempts:");
    for (AttemptRecord a : r.attempts()) {
      out.printf(Locale.ROOT, "  #%d gen %d %s -> %s %s%s; %s; next delay %s (%s)%n", a.number(), a.generation(),
          a.startedAt(), a.endedAt(), a.classification(), a.status() != null ? " HTTP " + a.status() : "",
          safe(a.exceptionClass() != null ? a.exceptionClass() : a.reason()), a.delay(), safe(a.decision()));
    }
  }
}
