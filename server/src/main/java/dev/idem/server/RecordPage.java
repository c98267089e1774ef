package dev.idem.server;

import java.util.List;
import java.util.Objects;

/**
 * One page of records for an operator, oldest claim first.
 *
 * @param records at most the query's limit
 * @param more true when more records matched than the page holds; narrow the query (a larger
 *     {@link RecordQuery#olderThan}) to see the rest
 * @param unreadable the records of this page that could not be read, skipped: their state is one
 *     this Idem does not know (a newer Idem's, a hand edit); with {@code records}, at most the
 *     query's limit
 */
public record RecordPage(List<RecordSummary> records, boolean more, List<RecordId> unreadable) {
  /**
   * Makes the record.
   *
   * @param records at most the query's limit; copied
   * @param more true when more records matched than the page holds
   * @param unreadable the records skipped because they could not be read; copied
   * @throws NullPointerException if a list is null
   */
  public RecordPage {
    records = List.copyOf(Objects.requireNonNull(records, "records"));
    unreadable = List.copyOf(Objects.requireNonNull(unreadable, "unreadable"));
  }

  /**
   * A page on which every record could be read.
   *
   * @param records at most the query's limit; copied
   * @param more true when more records matched than the page holds
   * @throws NullPointerException if records is null
   */
  public RecordPage(List<RecordSummary> records, boolean more) {
    this(records, more, List.of());
  }
}
