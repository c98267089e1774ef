package dev.idem.webhooks.internal;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * What the inbox remembers of a matched signature to recognise a replay: its SHA-256, unique per
 * source in the inbox's signature index.
 *
 * <p>A SHA-256 alone is random, so every accept inserted its index entry on a random leaf of that
 * B-tree, each group commit rewrote as many 4 KiB index pages as it carried accepts, and once the
 * index outgrew SQLite's page cache each accept read pages back (issue 28, W1; 8 threads accepting
 * 120,000 events: 15.7 kB written and 8.6 kB read per accept, against 11.0 to 11.7 and 0.9 to 1.3
 * with the prefix; the insert alone, in SQLite at 40,000 rows: 33 against 20 µs of CPU).
 * When the scheme signs its timestamp, the digest starts with that timestamp (8 bytes, big-endian
 * epoch seconds), so entries arrive in signing order at the index's right edge and a commit
 * rewrites one or two of its pages. Uniqueness is unchanged: a replay carries the same signature,
 * hence the same signed timestamp, hence the same digest.
 *
 * <p>Only when the scheme also signs the event id: a replay of an event accepted before this
 * prefix existed (its digest is the bare SHA-256) is then still refused, by its event id, as a
 * duplicate. Where the id is not signed (GitHub's delivery header) the remembered signature is the
 * only defence against a replay under a new id, so the digest stays what older inboxes hold; where
 * the timestamp is not signed, a replay could carry another one, so it is left out.
 */
public final class SignatureDigest {
  private SignatureDigest() {
  }

  /**
   * What is stored of the first of the result's signatures ({@link SchemeResult#signatures}).
   *
   * @param result the verified delivery's scheme result
   * @param signsTimestampAndId whether the scheme's MAC covers both the timestamp and the event id
   *     ({@link Verifier#signsTimestampAndId()})
   */
  public static byte[] of(SchemeResult result, boolean signsTimestampAndId) {
    return of(result.signatures().get(0), result.timestamp(), signsTimestampAndId);
  }

  /**
   * What would have been stored of each of the others, had the delivery matched under their secret
   * alone: looked for, so that a replay that carries only another secret's signature is still
   * refused ({@link Verifier#match}). Empty for one secret, or a scheme that signs its event id.
   *
   * @param result the verified delivery's scheme result
   * @param signsTimestampAndId as for {@link #of(SchemeResult, boolean)}
   */
  public static List<byte[]> others(SchemeResult result, boolean signsTimestampAndId) {
    List<byte[]> signatures = result.signatures();
    if (signatures.size() == 1) {
      return List.of();
    }
    List<byte[]> out = new ArrayList<>(signatures.size() - 1);
    for (byte[] mac : signatures.subList(1, signatures.size())) {
      out.add(of(mac, result.timestamp(), signsTimestampAndId));
    }
    return List.copyOf(out);
  }

  private static byte[] of(byte[] mac, Long timestamp, boolean signsTimestampAndId) {
    byte[] sha = Hmac.sha256(mac);
    if (!signsTimestampAndId || timestamp == null) {
      return sha;
    }
    return ByteBuffer.allocate(Long.BYTES + sha.length).putLong(timestamp).put(sha).array();
  }
}
