package dev.idem.jdbc.internal;

import dev.idem.jdbc.internal.OperationTable.RowKey;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A Bloom filter of the identities the database may hold, so that a begin of a new key (nearly
 * every begin) need not look it up in H2: "absent" is certain, "present" may be wrong (then the
 * store looks). Without it, each begin read H2 index pages, and once the table outgrew H2's page
 * cache that read was a third of the calling thread's CPU.
 *
 * <p>It grows by adding a filter of twice the capacity when the current one is full (a scalable
 * Bloom filter), so it never needs the keys again. Deleted rows (purge) stay in it: they only cost
 * a look-up. A key is looked for in every segment, so their false-positive rates add up: each new
 * segment gets half the rate of the one before (1% for the first, with more bits per key each
 * time), which keeps the sum under 2% however far it grows. With one rate for every
 * segment, a journal that had seen a million keys (ten segments) looked up about one new key in
 * ten in H2.
 *
 * <p>Thread-safe: bits are set with atomic operations, and a key added before a lookup starts is
 * seen by it.
 */
final class KeyFilter {
  private static final int HASHES = 7;
  /** The first segment's false-positive rate; each later one has half its predecessor's. */
  private static final double FIRST_RATE = 0.01;

  /** Every segment, newest last; replaced whole (under this) when one is added, read without locking. */
  private volatile Segment[] segments;

  /** @param expectedKeys how many keys the first segment holds before the filter grows */
  KeyFilter(long expectedKeys) {
    segments = new Segment[] {new Segment(Math.max(1024, expectedKeys), FIRST_RATE)};
  }

  /** Records that the database may hold {@code key}. */
  void add(RowKey key) {
    long h = hash(key);
    Segment[] all = segments;
    Segment s = all[all.length - 1];
    if (s.count.get() >= s.capacity) {
      synchronized (this) {
        all = segments;
        s = all[all.length - 1];
        if (s.count.get() >= s.capacity) {
          s = new Segment(s.capacity * 2, s.rate / 2);
          Segment[] grown = Arrays.copyOf(all, all.length + 1);
          grown[all.length] = s;
          segments = grown;
        }
      }
    }
    s.add(h);
  }

  /** False if the database certainly does not hold {@code key}. */
  boolean mightContain(RowKey key) {
    long h = hash(key);
    for (Segment s : segments) {
      if (s.mightContain(h)) {
        return true;
      }
    }
    return false;
  }

  /** FNV-1a over the identity's UTF-8 bytes, then a 64-bit finalizer (keys are random UUIDs, but scopes may not be). */
  private static long hash(RowKey key) {
    long h = 0xcbf29ce484222325L;
    for (String part : new String[] {key.scope(), key.operation(), key.key()}) {
      for (byte b : part.getBytes(StandardCharsets.UTF_8)) {
        h = (h ^ (b & 0xff)) * 0x100000001b3L;
      }
      h = (h ^ 0xff) * 0x100000001b3L; // a separator, so that "ab"+"c" and "a"+"bc" differ
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }

  private static final class Segment {
    final long capacity;
    final double rate;
    final long bits;
    final AtomicLongArray words;
    final AtomicLong count = new AtomicLong();

    /** A Bloom filter for {@code capacity} keys with a false-positive rate of {@code rate} when full. */
    Segment(long capacity, double rate) {
      this.capacity = capacity;
      this.rate = rate;
      // Bits per key for this rate with HASHES probes: 9.6 at 1%, 18 at 0.03%, 33 at 0.001%. A
      // tighter segment gets more bits, not more probes: each probe of an add is a cache miss.
      double bitsPerKey = -HASHES / Math.log(1 - Math.pow(rate, 1.0 / HASHES));
      long words = ((long) Math.ceil(capacity * bitsPerKey) + 63) / 64;
      if (words > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("key filter too large: " + capacity + " keys");
      }
      this.words = new AtomicLongArray((int) words);
      this.bits = words * 64;
    }

    void add(long h) {
      int h1 = (int) h;
      int h2 = (int) (h >>> 32);
      for (int i = 0; i < HASHES; i++) {
        long bit = Math.floorMod(h1 + (long) i * h2, bits);
        int word = (int) (bit >>> 6);
        long mask = 1L << (bit & 63);
        long old = words.get(word);
        while ((old & mask) == 0 && !words.compareAndSet(word, old, old | mask)) {
          old = words.get(word);
        }
      }
      count.incrementAndGet();
    }

    boolean mightContain(long h) {
      int h1 = (int) h;
      int h2 = (int) (h >>> 32);
      for (int i = 0; i < HASHES; i++) {
        long bit = Math.floorMod(h1 + (long) i * h2, bits);
        if ((words.get((int) (bit >>> 6)) & (1L << (bit & 63))) == 0) {
          return false;
        }
      }
      return true;
    }
  }
}
