package dev.idem.jdbc.internal;

import java.sql.SQLException;

/**
 * The widths of the H2 schema's text columns (see the H2 migrations), checked before a row image is
 * logged. H2 itself refuses a value that is too long when the statement runs; a {@link LoggedStore}
 * runs that statement later, in the background, and a refusal there would leave a row in the log
 * that no replay could write. So the check happens at the call, and it fails as H2 would have
 * (SQLState 22001), before anything is logged.
 */
final class ColumnLimits {
  static final int IDENTITY_PART = 200;
  static final int KEY = 255;
  static final int REFERENCE = 200;
  static final int FINGERPRINT = 64;
  static final int STATE = 32;
  static final int OWNER = 200;
  static final int JSON = 1_000_000;
  static final int REASON = OperationTable.MAX_REASON;
  static final int QUARANTINE_REASON = 500;

  private ColumnLimits() {
  }

  /**
   * @throws SQLException (SQLState 22001) naming the first column whose value is too long; the
   *     message holds no values
   */
  static void check(RawRow r) throws SQLException {
    fits("scope", r.scope(), IDENTITY_PART);
    fits("operation", r.operation(), IDENTITY_PART);
    fits("op_key", r.key(), KEY);
    fits("reference", r.reference(), REFERENCE);
    fits("fingerprint", r.fingerprint(), FINGERPRINT);
    fits("request_json", r.requestJson(), JSON);
    fits("state", r.state(), STATE);
    fits("owner", r.owner(), OWNER);
    fits("attempts_json", r.attemptsJson(), JSON);
    fits("response_json", r.responseJson(), JSON);
    fits("reason", r.reason(), REASON);
    fits("quarantine_reason", r.quarantineReason(), QUARANTINE_REASON);
  }

  private static void fits(String column, String value, int max) throws SQLException {
    if (value != null && value.length() > max) {
      throw new SQLException("Value too long for column " + column + ": " + value.length() + " characters, at most "
          + max, "22001");
    }
  }
}
