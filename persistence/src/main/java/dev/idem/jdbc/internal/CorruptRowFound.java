package dev.idem.jdbc.internal;

import dev.idem.core.JournalException;

/**
 * Thrown out of a unit of work that met a row it cannot decode, so that the journal can quarantine
 * the row after the unit has been rolled back. Never escapes the journal.
 */
public final class CorruptRowFound extends JournalException {
  private static final long serialVersionUID = 1L;

  private final transient RawRow row;

  public CorruptRowFound(RawRow row, CorruptRowException cause) {
    super(cause.getMessage(), null);
    this.row = row;
  }

  /** The row that could not be decoded. */
  public RawRow row() {
    return row;
  }
}
