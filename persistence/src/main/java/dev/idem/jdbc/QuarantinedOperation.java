package dev.idem.jdbc;

import java.time.Instant;

/**
 * A journal row that could not be read (an unknown state, a snapshot that is not valid JSON) and was
 * set aside. It stays in the database for inspection; the journal skips it everywhere else and
 * {@link JdbcJournal#purge} never deletes it. The identity is given as stored, since it may itself
 * be what is invalid.
 *
 * @param scope the stored scope
 * @param operation the stored operation name
 * @param key the stored idempotency key
 * @param reason what is wrong with the row: column and problem, never stored values
 * @param quarantinedAt when the journal set it aside
 */
public record QuarantinedOperation(String scope, String operation, String key, String reason,
    Instant quarantinedAt) {
}
