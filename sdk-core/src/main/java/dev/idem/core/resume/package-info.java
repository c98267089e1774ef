/**
 * Operations the journal holds that the application picks up later, typically after a restart:
 * a {@link dev.idem.core.resume.ResumeHandler} per operation name sends the PENDING ones again
 * with their key and receives their outcome ({@link dev.idem.core.IdempotentExecutor#resumePending}
 * reports a {@link dev.idem.core.resume.ResumeSummary}; queued delivery uses the same handlers), an
 * {@link dev.idem.core.resume.ExpiredPendingAction} says what happens to those too old to send, and
 * a {@link dev.idem.core.resume.Reconciler} settles UNCERTAIN ones by asking the server. For
 * applications.
 */
package dev.idem.core.resume;
