package dev.idem.jdbc.internal;

import dev.idem.storage.Durability;
import dev.idem.storage.Store;
import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;

/**
 * Decodes stored rows for the journal and sets aside the ones that cannot be decoded (unknown
 * state, snapshot that is not valid JSON): the row is flagged in place with the reason, logged at
 * WARN (identity and reason, never stored values), and skipped by every query from then on.
 *
 * <p>Two situations, because a row can be met outside or inside a unit of work:
 * <ul>
 *   <li>Outside (reads): {@link #decodeAll} quarantines and skips, {@link #decodeOrQuarantine}
 *       quarantines and throws.</li>
 *   <li>Inside a write unit: {@link #decode}, {@link #state} and {@link #decodeResponse} only throw
 *       {@link CorruptRowFound}, which rolls the unit back; {@link #quarantining} around the unit
 *       then quarantines the row in a unit of its own, so the flag is not lost with the rollback.</li>
 * </ul>
 */
public final class Quarantine {
  /** Rows per read of the opening sweep for unknown states. */
  private static final int SWEEP_BATCH = 100;

  private final String journalName;
  private final Store store;
  private final OperationTable table;
  private final RecordCodec codec;
  private final Clock clock;
  private final Logger log;

  /**
   * @param log the journal's logger: quarantine warnings appear under the public journal's name,
   *     which is what apps configure
   */
  public Quarantine(String journalName, Store store, OperationTable table, RecordCodec codec, Clock clock,
      Logger log) {
    this.journalName = journalName;
    this.store = store;
    this.table = table;
    this.codec = codec;
    this.clock = clock;
    this.log = log;
  }

  /** A unit of journal work that may meet a corrupt row. */
  public interface Call<T> {
    T run() throws IdempotencyException;
  }

  /** Runs a unit that may meet a corrupt row; quarantines it after the unit rolled back, and explains. */
  public <T> T quarantining(Call<T> call) throws IdempotencyException {
    try {
      return call.run();
    } catch (CorruptRowFound e) {
      quarantine(e.row(), e.getMessage());
      throw quarantinedError(e.row().idText(), e.getMessage());
    }
  }

  /** Reads one value from a row, or explains (without values) why it cannot. */
  public interface RowDecoder<T> {
    T decode(RawRow row) throws CorruptRowException;
  }

  /** Decodes rows read outside a unit of work, quarantining (and leaving out) the ones that cannot be. */
  public List<OperationRecord> decodeAll(List<RawRow> rows) throws IdempotencyException {
    return decodeAll(rows, codec::decode);
  }

  /**
   * Reads {@code decoder}'s value from each row read outside a unit of work, quarantining (and
   * leaving out) the rows it cannot read, as {@link #decodeAll(List)} does.
   */
  public <T> List<T> decodeAll(List<RawRow> rows, RowDecoder<T> decoder) throws IdempotencyException {
    List<T> result = new ArrayList<>(rows.size());
    for (RawRow row : rows) {
      try {
        result.add(decoder.decode(row));
      } catch (CorruptRowException e) {
        quarantine(row, e.getMessage());
      }
    }
    return result;
  }

  /**
   * Decodes one row read outside a unit of work.
   *
   * @throws JournalException if the row is, or now gets, quarantined
   */
  public OperationRecord decodeOrQuarantine(RawRow row) throws IdempotencyException {
    failIfQuarantined(row);
    try {
      return codec.decode(row);
    } catch (CorruptRowException e) {
      quarantine(row, e.getMessage());
      throw quarantinedError(row.idText(), e.getMessage());
    }
  }

  /**
   * Decodes a row inside a unit of work run by {@link #quarantining}.
   *
   * @throws CorruptRowFound if the row cannot be decoded
   * @throws JournalException if the row is already quarantined
   */
  public OperationRecord decode(RawRow row) throws JournalException {
    failIfQuarantined(row);
    try {
      return codec.decode(row);
    } catch (CorruptRowException e) {
      throw new CorruptRowFound(row, e);
    }
  }

  /**
   * Like {@link #decode(RawRow)}, for a row read without its {@code request_json}, whose request
   * is already known (see {@link RecordCodec#decode(RawRow, dev.idem.core.spi.RequestSnapshot)}).
   *
   * @throws CorruptRowFound if the row cannot be decoded
   * @throws JournalException if the row is already quarantined
   */
  public OperationRecord decode(RawRow row, dev.idem.core.spi.RequestSnapshot request) throws JournalException {
    failIfQuarantined(row);
    try {
      return codec.decode(row, request);
    } catch (CorruptRowException e) {
      throw new CorruptRowFound(row, e);
    }
  }

  /**
   * The state of a row inside a unit of work, without decoding the rest of it.
   *
   * @throws CorruptRowFound if the state is unknown
   */
  public static OperationState state(RawRow row) throws JournalException {
    try {
      return RecordCodec.state(row.state());
    } catch (CorruptRowException e) {
      throw new CorruptRowFound(row, e);
    }
  }

  /** Decodes a response just encoded for {@code row} inside a unit of work. */
  public ResponseSnapshot decodeResponse(RawRow row, String responseJson) throws JournalException {
    try {
      return codec.decodeResponse(responseJson);
    } catch (CorruptRowException e) {
      throw new CorruptRowFound(row, e); // cannot happen: we just encoded it
    }
  }

  /** Throws if the row was quarantined earlier: it is kept for inspection, never acted on. */
  public static void failIfQuarantined(RawRow row) throws JournalException {
    if (row.quarantinedAt() != null) {
      throw quarantinedError(row.idText(), row.quarantineReason());
    }
  }

  /**
   * Quarantines every row with a state this version does not know. Run at open, so that such rows
   * (written by a newer version, or damaged) are set aside before any query meets them.
   */
  public void sweepUnknownStates() throws IdempotencyException {
    List<RawRow> rows;
    do {
      rows = store.read(null, c -> table.unknownStates(c, SWEEP_BATCH));
      for (RawRow r : rows) {
        try {
          RecordCodec.state(r.state());
        } catch (CorruptRowException e) {
          quarantine(r, e.getMessage());
        }
      }
    } while (rows.size() == SWEEP_BATCH);
  }

  /** Quarantined rows, oldest quarantine first. */
  public List<RawRow> list(int limit) throws IdempotencyException {
    return store.read(null, c -> table.quarantined(c, limit));
  }

  /** Flags a row read outside a unit of work that cannot be decoded, so that every query skips it. */
  void quarantine(RawRow row, String reason) throws IdempotencyException {
    if (store.readOnly()) {
      log.warn("Idem journal {}: operation {} cannot be read ({}); not flagged, the journal is open read-only",
          journalName, row.idText(), reason);
      return;
    }
    log.warn("Idem journal {}: quarantined operation {}: {}", journalName, row.idText(), reason);
    long at = Instants.toNanos(clock.instant());
    store.write(Durability.DEFERRED, null,
        c -> {
          table.quarantine(c, row.scope(), row.operation(), row.key(), at, reason);
          return null;
        });
  }

  private static JournalException quarantinedError(String id, String reason) {
    return new JournalException("operation " + id + " is quarantined because its journal row cannot be read ("
        + reason + "); it is kept for inspection and skipped by the journal", null);
  }
}
