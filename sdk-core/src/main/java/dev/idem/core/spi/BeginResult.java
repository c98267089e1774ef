package dev.idem.core.spi;

import dev.idem.core.OperationRecord;
import java.util.Objects;

/**
 * What {@link Journal#begin} found: the record, and whether this call created it.
 *
 * @param record the record, new or existing
 * @param created true if this call created it; false if the identity was already journaled with
 *     the same fingerprint
 */
public record BeginResult(OperationRecord record, boolean created) {
  /**
   * Validates the components.
   *
   * @param record the record, new or existing
   * @param created true if this call created it
   * @throws NullPointerException if {@code record} is null
   */
  public BeginResult {
    Objects.requireNonNull(record, "record");
  }
}
