package dev.idem.jdbc.internal;

/**
 * A stored row that cannot be decoded: an unknown state, a snapshot that is not valid JSON, a
 * missing field. The message names the column and the problem, never the stored values (which may
 * hold request data).
 */
public final class CorruptRowException extends Exception {
  private static final long serialVersionUID = 1L;

  public CorruptRowException(String message) {
    super(message, null, false, false);
  }
}
