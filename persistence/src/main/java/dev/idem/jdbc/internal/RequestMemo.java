package dev.idem.jdbc.internal;

import dev.idem.core.OperationId;
import dev.idem.core.spi.RequestSnapshot;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The requests of unfinished operations that a page read (the resume's findDue above all) has
 * just decoded, so that a write that returns the whole record ({@code transition}) need not parse
 * the request back from its stored JSON: that parse was 15% of a durable call's CPU samples and
 * 11 KB of garbage per call (docs/benchmark-end-to-end.md), all of it on the one writer
 * connection's turn. A begin keeps nothing here: the executor's inline call ends each attempt with
 * a write that reads no row, so the memo stays empty, and {@link #remove} takes no lock, while no
 * resume runs.
 *
 * <p>An entry is used only for a row whose stored {@code request_check} (SHA-256 over the
 * fingerprint and the request's stored JSON, {@link RequestCheck}) equals the one the request was
 * kept with: a row purged and begun again with another request, or changed by
 * another process, misses and is decoded from the database as before. What it does not do is
 * re-verify the stored JSON against that checksum: a byte of {@code request_json} damaged while
 * the operation runs is found by the next read that decodes the row (every read that can lead to a
 * send does), not by the transition, which sends nothing.
 *
 * <p>Bounded in bytes ({@code maxBytes}, counted as body, URI and header characters plus a fixed
 * overhead per entry); when full, the oldest entries go first, and a request larger than an
 * eighth of the budget is not kept. Thread-safe (one monitor, held for a map operation only).
 */
public final class RequestMemo {
  private static final int ENTRY_OVERHEAD = 256;

  private record Entry(String requestCheck, RequestSnapshot request, long bytes) {
  }

  private final long maxBytes;
  private final Map<OperationId, Entry> entries = new LinkedHashMap<>();
  private long bytes;
  /** The entries' count, written under the monitor; read without it by {@link #remove}. */
  private volatile int count;

  /**
   * @param maxBytes the most the kept requests may take, roughly; 0 keeps none
   */
  public RequestMemo(long maxBytes) {
    this.maxBytes = maxBytes;
  }

  /** Remembers the request just read under {@code id}, stored with checksum {@code requestCheck}. */
  public void put(OperationId id, String requestCheck, RequestSnapshot request) {
    long size = sizeOf(request);
    if (size > maxBytes / 8) {
      return;
    }
    synchronized (this) {
      Entry old = entries.put(id, new Entry(requestCheck, request, size));
      bytes += size - (old == null ? 0 : old.bytes());
      Iterator<Entry> oldest = entries.values().iterator();
      while (bytes > maxBytes && oldest.hasNext()) {
        bytes -= oldest.next().bytes();
        oldest.remove();
      }
      count = entries.size();
    }
  }

  /**
   * The request remembered for {@code id}, if the row's stored checksum is the one it was begun
   * with; otherwise null (decode the row).
   */
  public RequestSnapshot get(OperationId id, String storedRequestCheck) {
    if (storedRequestCheck == null) {
      return null;
    }
    Entry e;
    synchronized (this) {
      e = entries.get(id);
    }
    return e != null && e.requestCheck().equals(storedRequestCheck) ? e.request() : null;
  }

  /** Forgets {@code id}: it finished, and no write of this journal will need its request again. */
  public void remove(OperationId id) {
    // Every finished operation calls this. While the memo is empty (no page read is resuming
    // anything) it takes no monitor. A put racing with this unlocked read leaves an entry behind:
    // harmless, since get checks the row's stored checksum and the bound in bytes evicts it.
    if (count == 0) {
      return;
    }
    synchronized (this) {
      Entry e = entries.remove(id);
      if (e != null) {
        bytes -= e.bytes();
      }
      count = entries.size();
    }
  }

  /** How many requests are kept (for tests). */
  public synchronized int size() {
    return entries.size();
  }

  private static long sizeOf(RequestSnapshot r) {
    long size = ENTRY_OVERHEAD + r.bodyLength() + r.uri().toString().length();
    for (Map.Entry<String, List<String>> h : r.headers().entrySet()) {
      size += h.getKey().length() + 16;
      for (String v : h.getValue()) {
        size += v.length() + 16;
      }
    }
    return size;
  }
}
