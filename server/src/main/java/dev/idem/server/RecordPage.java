package dev.idem.server;

import java.util.List;
import java.util.Objects;

/**
 * One page of records for an operator, oldest claim first.
 *
 * @param records at most the query's limit
 * @param more true when more records matched than the page holds; narrow the query (a larger
 *     {@link RecordQuery#olderThan}) to see the rest
 */
public record RecordPage(List<RecordSummary> records, boolean more) {
  /**
   * Makes the record.
   *
   * @param records at most the query's limit; copied
   * @param more true when more records matched than the page holds
   * @throws NullPointerException if records is null
   */
  public RecordPage {
    records = List.copyOf(Objects.requireNonNull(records, "records"));
  }
}
