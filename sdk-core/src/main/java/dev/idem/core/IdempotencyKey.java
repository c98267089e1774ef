package dev.idem.core;

import dev.idem.core.internal.KeySyntax;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.Objects;
import java.util.Random;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The idempotency key of one logical operation: an opaque token that is created once, before the
 * first attempt, and sent unchanged on every attempt, including after a restart.
 *
 * <p>Three ways to get one:
 * <ul>
 *   <li>{@link #generate()}: a UUIDv7 (RFC 9562: the creation time in milliseconds, then 74 random
 *       bits from {@link SecureRandom}), the default;</li>
 *   <li>{@link #of(String)}: a key the app already has, validated;</li>
 *   <li>{@link #derive(byte[], String, String, String)}: an HMAC-SHA256 of a business reference, so that
 *       a restartable batch job maps the same reference to the same opaque key without putting the
 *       reference (which may be personal data) into the key.</li>
 * </ul>
 *
 * <p>Instances are immutable and thread-safe. {@link #toString()} returns the key itself: keys are
 * not secrets, but they must never contain personal data, which is why derived keys are hashed.
 */
public final class IdempotencyKey {
  /** The longest key accepted, in characters. */
  public static final int MAX_LENGTH = KeySyntax.MAX_LENGTH;

  /**
   * One DRBG per thread. A shared {@link SecureRandom} serializes every caller on its locks (4% of
   * the lock waits of 32 concurrent callers), and so do several NativePRNG instances, which share
   * one reader of /dev/urandom. Each thread's DRBG (NIST SP 800-90A Hash_DRBG, SHA-256, 128-bit
   * strength, the JDK's default mechanism) is instantiated on its first use with fresh input from
   * the system's entropy source ({@code securerandom.source}, the kernel's generator on Linux), so
   * every thread's stream is independent and at least as strong as the shared one was; none is
   * seeded from another thread's, from a counter or from the time. Bytes are drawn
   * {@value #POOL_BYTES} at a time (a DRBG request has a fixed cost of several hashes, whatever its
   * length) and each is handed out once only.
   */
  private static final ThreadLocal<RandomPool> RANDOM = ThreadLocal.withInitial(RandomPool::new);
  private static final int POOL_BYTES = 256;

  /** A thread's DRBG and the unused rest of its last output. */
  private static final class RandomPool extends Random {
    private static final long serialVersionUID = 1L;
    private final transient SecureRandom drbg = newRandom();
    private final transient byte[] pool = new byte[POOL_BYTES];
    private transient int used = POOL_BYTES;

    /** Fills {@code bytes} from the pool, drawing a new pool when this one is spent. */
    @Override
    public void nextBytes(byte[] bytes) {
      if (bytes.length > POOL_BYTES) {
        drbg.nextBytes(bytes);
        return;
      }
      if (used + bytes.length > POOL_BYTES) {
        drbg.nextBytes(pool);
        used = 0;
      }
      System.arraycopy(pool, used, bytes, 0, bytes.length);
      used += bytes.length;
    }

    @Override
    protected int next(int bits) {
      throw new UnsupportedOperationException("keys draw whole bytes");
    }
  }

  private static final int MIN_SECRET_BYTES = 16;

  private final String value;

  private IdempotencyKey(String value) {
    this.value = value;
  }

  /**
   * Creates a fresh key: UUIDv7 text (RFC 9562), the current time in milliseconds followed by 74
   * random bits from a {@link SecureRandom} (a DRBG of the calling thread's own, seeded from the
   * system's entropy source on the thread's first key, so that concurrent callers do not queue on
   * one lock; its output is drawn in blocks and each byte serves one key only). Thread-safe.
   *
   * <p>Why time first: keys made later sort later, so a journal's index on the key grows at its
   * end instead of changing a random page for every new operation. In a probe of the H2 journal
   * that halved the work of writing each operation to H2. The time is not a secret (the server
   * sees when each request arrives), and 74 random bits per millisecond keep keys unguessable and,
   * in practice, unique.
   *
   * @return a new key, never equal to an earlier one in practice
   */
  public static IdempotencyKey generate() {
    return generate(RANDOM.get(), Clock.systemUTC());
  }

  private static SecureRandom newRandom() {
    try {
      return SecureRandom.getInstance("DRBG");
    } catch (GeneralSecurityException e) {
      // A JVM without the DRBG mechanism (it is standard since Java 9): the platform default.
      return new SecureRandom();
    }
  }

  /**
   * Creates a UUIDv7 key from the given randomness and clock (RFC 9562: the clock's milliseconds,
   * then 74 random bits). Production code should use {@link #generate()}; this overload lets tests
   * make keys reproducible.
   *
   * @param random the source of the 74 random bits
   * @param clock the creation time; its milliseconds since 1970 must fit in 48 bits
   * @return a new key in UUIDv7 text form
   * @throws IllegalArgumentException if the clock is before 1970 or after the year 10889
   */
  public static IdempotencyKey generate(Random random, Clock clock) {
    Objects.requireNonNull(random, "random");
    Objects.requireNonNull(clock, "clock");
    long millis = clock.millis();
    if (millis < 0 || millis >= 1L << 48) {
      throw new IllegalArgumentException("the clock's time does not fit a UUIDv7: " + clock.instant());
    }
    byte[] bytes = new byte[16];
    random.nextBytes(bytes);
    for (int i = 0; i < 6; i++) {
      bytes[i] = (byte) (millis >>> (40 - 8 * i)); // 48-bit big-endian time
    }
    bytes[6] = (byte) ((bytes[6] & 0x0f) | 0x70); // version 7
    return uuid(bytes);
  }

  /**
   * Creates a random UUIDv4 key from the given source of randomness (122 random bits, no time):
   * for tests that need keys reproducible without a clock. {@link #generate()} makes UUIDv7 keys.
   *
   * @param random the source of the 122 random bits
   * @return a new key in UUIDv4 text form
   */
  public static IdempotencyKey generate(Random random) {
    Objects.requireNonNull(random, "random");
    byte[] bytes = new byte[16];
    random.nextBytes(bytes);
    bytes[6] = (byte) ((bytes[6] & 0x0f) | 0x40); // version 4
    return uuid(bytes);
  }

  private static final byte[] HEX_DIGITS = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

  /**
   * UUID text of 16 bytes whose version is set, with the IETF variant set here: what
   * {@code java.util.UUID.toString()} writes (lower-case 8-4-4-4-12 hex, the bytes in RFC 9562's
   * order), written straight from the bytes instead of through two buffers and a UUID for each key.
   */
  private static IdempotencyKey uuid(byte[] bytes) {
    bytes[8] = (byte) ((bytes[8] & 0x3f) | 0x80); // IETF variant
    byte[] text = new byte[36];
    int j = 0;
    for (int i = 0; i < 16; i++) {
      if (i == 4 || i == 6 || i == 8 || i == 10) {
        text[j++] = '-';
      }
      text[j++] = HEX_DIGITS[(bytes[i] >> 4) & 0xf];
      text[j++] = HEX_DIGITS[bytes[i] & 0xf];
    }
    return new IdempotencyKey(new String(text, StandardCharsets.US_ASCII));
  }

  /**
   * Wraps a key that the app supplies. The characters are the ones the key header carries
   * unchanged in both of its spellings, bare and quoted, and that no intermediary can merge with
   * another key: why, in {@link dev.idem.core.http.KeyHeader}. Every key Idem makes itself (UUIDs,
   * base64url) is one.
   *
   * @param value 1 to {@value #MAX_LENGTH} visible ASCII characters (0x21 to 0x7E) other than the
   *     double quote, the comma and the backslash
   * @return the key
   * @throws IllegalArgumentException if the value is empty, too long, or has a character outside
   *     that set; the message says which character and where, never the whole value
   */
  public static IdempotencyKey of(String value) {
    Objects.requireNonNull(value, "idempotency key");
    String problem = KeySyntax.problem(value);
    if (problem != null) {
      throw new IllegalArgumentException("idempotency key has " + problem + "; a key is 1 to " + MAX_LENGTH
          + " visible ASCII characters other than '\"', ',' and '\\'");
    }
    return new IdempotencyKey(value);
  }

  /**
   * Derives a stable, opaque key from a business reference with HMAC-SHA256, so that re-running a
   * batch job sends the same key for the same reference. The reference never appears in the key.
   * The result is 43 characters of unpadded base64url.
   *
   * @param secret the HMAC key, at least 16 bytes; keep it secret, or keys become guessable
   * @param scope the caller or tenant
   * @param operation the operation name, such as {@code create-order}
   * @param businessReference the app's own reference, such as an invoice number
   * @return the derived key
   * @throws IllegalArgumentException if the secret is shorter than 16 bytes or a part is empty
   */
  public static IdempotencyKey derive(byte[] secret, String scope, String operation, String businessReference) {
    Objects.requireNonNull(secret, "secret");
    if (secret.length < MIN_SECRET_BYTES) {
      throw new IllegalArgumentException("HMAC secret must have at least " + MIN_SECRET_BYTES + " bytes");
    }
    requireText(scope, "scope");
    requireText(operation, "operation");
    requireText(businessReference, "businessReference");
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      // Length-prefix every part so that ("ab","c") and ("a","bc") never collide.
      for (String part : new String[] {scope, operation, businessReference}) {
        byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
        mac.update(ByteBuffer.allocate(Integer.BYTES).putInt(bytes.length).array());  // big-endian length
        mac.update(bytes);
      }
      return new IdempotencyKey(Base64.getUrlEncoder().withoutPadding().encodeToString(mac.doFinal()));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
    }
  }

  private static void requireText(String s, String what) {
    Objects.requireNonNull(s, what);
    if (s.isEmpty()) {
      throw new IllegalArgumentException(what + " must not be empty");
    }
  }

  /**
   * Returns the key as sent on the wire.
   *
   * @return the key's text, exactly as it goes into the idempotency key header
   */
  public String value() {
    return value;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IdempotencyKey other && value.equals(other.value);
  }

  @Override
  public int hashCode() {
    return value.hashCode();
  }

  @Override
  public String toString() {
    return value;
  }
}
