package dev.idem.storage;

import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Words for a value too long for a store's column: the column the driver names and its limit, or
 * the store's own limits when the driver names no column (PostgreSQL names the type only). Never
 * the value, which may hold request data, and never another store's columns.
 */
final class TooLongValue {
  /** Each store's columns of limited length, as its migrations declare them; the guard's are TEXT. */
  private static final Map<String, Map<String, Integer>> LIMITS = Map.of(
      "journal", Map.of("scope", 200, "operation", 200, "op_key", 255, "reference", 200, "owner", 200,
          "fingerprint", 64, "request_check", 64, "state", 32, "reason", 2000, "quarantine_reason", 500),
      "webhook inbox", Map.of("source", 64, "event_id", 255, "event_type", 255, "state", 16, "lease_owner", 128,
          "owner", 128, "last_error", 1000, "error", 1000, "outcome", 16, "decision", 300));
  /** Each store's limits in words, for a message that names neither a column nor a length. */
  private static final Map<String, String> SUMMARIES = Map.of(
      "journal", "owners, scopes, operation names and references hold at most 200 characters, keys 255",
      "webhook inbox", "sources hold at most 64 characters, event ids and event types 255, processor owners 128"
          + " (lease_owner, owner)");

  private TooLongValue() {
  }

  /**
   * @param store the store in messages ({@link Schema#what()})
   * @param column the column the driver named, or null
   */
  static String describe(String store, String column) {
    return describe(store, column, null);
  }

  /**
   * @param store the store in messages ({@link Schema#what()})
   * @param column the column the driver named, or null
   * @param message the driver's message, or null: PostgreSQL names no column but the type's length
   *     ({@code character varying(128)}), which narrows it to the store's columns of that length
   */
  static String describe(String store, String column, String message) {
    String said = "a value is too long for the " + store + "'s column";
    if (column == null) {
      Integer length = lengthOf(message);
      Map<String, Integer> limits = LIMITS.getOrDefault(store, Map.of());
      String ofThatLength = length == null ? "" : limits.entrySet().stream().filter(c -> c.getValue().equals(length))
          .map(Map.Entry::getKey).sorted().collect(Collectors.joining(" or "));
      if (!ofThatLength.isEmpty()) {
        return said + " " + ofThatLength + " (at most " + length + " characters)";
      }
      String summary = SUMMARIES.get(store);
      return summary == null ? said : said + " (" + summary + ")";
    }
    Integer limit = LIMITS.getOrDefault(store, Map.of()).get(column);
    return said + " " + column + (limit == null ? "" : " (at most " + limit + " characters)");
  }

  /**
   * The length in PostgreSQL's "value too long for type character varying(N)": only the digits in
   * the parentheses after "varying" are read (the message carries no value, but nothing else is
   * taken from it), or null.
   */
  static Integer lengthOf(String message) {
    if (message == null) {
      return null;
    }
    String lower = message.toLowerCase(Locale.ROOT);
    int at = lower.indexOf("varying(");
    if (at < 0) {
      return null;
    }
    int i = at + "varying(".length();
    int end = i;
    while (end < lower.length() && end - i < 6 && Character.isDigit(lower.charAt(end))) {
      end++;
    }
    boolean closed = end > i && end < lower.length() && lower.charAt(end) == ')';
    return closed ? Integer.valueOf(lower.substring(i, end)) : null;
  }

  /**
   * The column a "value too long" message names: the word after "column" (H2 quotes it and adds its
   * type; the statement text that follows lists every column, and the value may hold request data,
   * so nothing else is taken from the message).
   */
  static String columnOf(String message) {
    if (message == null) {
      return null;
    }
    String lower = message.toLowerCase(Locale.ROOT);
    int at = lower.indexOf("column ");
    if (at < 0) {
      return null;
    }
    int i = at + "column ".length();
    while (i < lower.length() && lower.charAt(i) == '"') {
      i++;
    }
    int end = i;
    while (end < lower.length() && (Character.isLetter(lower.charAt(end)) || lower.charAt(end) == '_')) {
      end++;
    }
    return columnName(lower.substring(i, end));
  }

  /** The column of a SQLite length CHECK constraint named {@code <column>_length} in the schema. */
  static String lengthConstraintColumn(String text) {
    int end = text.indexOf("_length");
    int start = end;
    while (start > 0 && (Character.isLetter(text.charAt(start - 1)) || text.charAt(start - 1) == '_')) {
      start--;
    }
    return columnName(text.substring(start, end));
  }

  /**
   * {@code word} if it has the shape of an Idem column name (lower-case letters and underscores,
   * short): a word of this shape right after "column" (or before "_length") is the driver naming a
   * column, never a quoted value.
   */
  private static String columnName(String word) {
    boolean shaped = !word.isEmpty() && word.length() <= 40
        && word.chars().allMatch(ch -> ch == '_' || (ch >= 'a' && ch <= 'z'));
    return shaped ? word : null;
  }
}
