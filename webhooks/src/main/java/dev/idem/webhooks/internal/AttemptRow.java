package dev.idem.webhooks.internal;

/** One handler run as recorded: who, when, how it ended and what was decided next. */
public record AttemptRow(int run, String owner, long startedAtMs, Long endedAtMs, String outcome, String error,
    String decision) {
}
