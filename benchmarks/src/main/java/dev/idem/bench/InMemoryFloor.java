package dev.idem.bench;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The floor under P1c: what keying a call in memory costs at many threads in a textbook design,
 * with no Idem code. Before the send: a key from a per-thread DRBG, the request's SHA-256
 * fingerprint (method, URL, body), and one packed record (key, fingerprint, URL, body) put into a
 * concurrent map under its key. After the answer: the record's status written in and, when the
 * floor keeps finished operations, the record left in the map (found by its key, as a journal that
 * remembers finished operations for a re-run must find them) with its key queued, while the
 * {@code keep} newest are kept (the oldest taken out of the map); keeping none, it leaves the map.
 *
 * <p>It has no state machine, no lease, no retry loop, no host guard, no single flight, no
 * listener, no index but the key's, and each record is one array. What it measures on top of raw
 * OkHttp is the least the guarantee's in-memory work can cost on this machine: the randomness, the
 * hash, the map, the header the server reads, and (keeping) the collector's copying of what is
 * kept.
 *
 * <p>Thread-safe.
 */
final class InMemoryFloor {
  /**
   * How many finished operations the floor keeping some keeps: about as many of the benchmark's
   * keyed POSTs as the default in-memory journal keeps within its 16 MiB estimate (some 24,000, from
   * its Javadoc).
   */
  static final int DEFAULT_KEEP = 24_000;

  private static final ThreadLocal<SecureRandom> RANDOM = ThreadLocal.withInitial(InMemoryFloor::drbg);
  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(InMemoryFloor::sha256);

  private final int keep;
  private final ConcurrentHashMap<String, byte[]> operations = new ConcurrentHashMap<>();
  /** The kept finished operations' keys, oldest first. */
  private final ConcurrentLinkedQueue<String> finished = new ConcurrentLinkedQueue<>();
  private final AtomicInteger kept = new AtomicInteger();

  /** @param keep how many finished operations to keep; 0 keeps none */
  InMemoryFloor(int keep) {
    this.keep = keep;
  }

  /** Records the request before its send and returns the key to send with it. */
  String begin(String method, String url, byte[] body) {
    byte[] random = new byte[16];
    RANDOM.get().nextBytes(random);
    ByteBuffer b = ByteBuffer.wrap(random);
    String key = new UUID(b.getLong(), b.getLong()).toString();
    MessageDigest sha = SHA256.get();
    sha.update(method.getBytes(StandardCharsets.US_ASCII));
    sha.update(url.getBytes(StandardCharsets.UTF_8));
    byte[] fingerprint = sha.digest(body);
    byte[] k = key.getBytes(StandardCharsets.US_ASCII);
    byte[] u = url.getBytes(StandardCharsets.UTF_8);
    byte[] record = ByteBuffer.allocate(k.length + fingerprint.length + u.length + body.length + 4)
        .put(k).put(fingerprint).put(u).put(body).array();
    operations.put(key, record);
    return key;
  }

  /** Records the answer's status for {@code key}'s operation and keeps or forgets it. */
  void finish(String key, int status) {
    if (keep == 0) {
      if (operations.remove(key) == null) {
        throw new IllegalStateException("no operation begun for " + key);
      }
      return;
    }
    byte[] record = operations.get(key);
    if (record == null) {
      throw new IllegalStateException("no operation begun for " + key);
    }
    ByteBuffer.wrap(record).putInt(record.length - 4, status);
    finished.add(key);
    if (kept.incrementAndGet() > keep) {
      String oldest = finished.poll();
      if (oldest != null) {
        operations.remove(oldest);
        kept.decrementAndGet();
      }
    }
  }

  /** How many finished operations are kept now. */
  int kept() {
    return kept.get();
  }

  /** Whether {@code key}'s operation is in memory (begun, or finished and kept). */
  boolean knows(String key) {
    return operations.containsKey(key);
  }

  private static SecureRandom drbg() {
    try {
      return SecureRandom.getInstance("DRBG");
    } catch (GeneralSecurityException e) {
      return new SecureRandom();
    }
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
    }
  }
}
