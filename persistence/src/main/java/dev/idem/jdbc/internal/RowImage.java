package dev.idem.jdbc.internal;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A whole {@link RawRow} as bytes, the payload of a {@link WriteAheadLog} record. A full image, not
 * a change, so that replaying the log is an upsert per record and replaying it twice does no harm.
 *
 * <p>Layout: a format byte, then every column in {@link OperationTable#COLUMNS} order; text as a
 * length (-1 for null) and UTF-8 bytes, numbers as 8 bytes with a presence byte for the nullable
 * ones.
 */
final class RowImage {
  private static final byte FORMAT = 1;

  private RowImage() {
  }

  static byte[] encode(RawRow r) {
    // Hot path (four images per operation): strings are converted once, then copied into one
    // exactly sized array; a DataOutputStream over a growing stream cost several times more.
    byte[][] texts = {
        utf8(r.scope()), utf8(r.operation()), utf8(r.key()), utf8(r.reference()), utf8(r.fingerprint()),
        utf8(r.requestJson()), utf8(r.state()), utf8(r.owner()), utf8(r.attemptsJson()), utf8(r.responseJson()),
        utf8(r.reason()), utf8(r.quarantineReason())};
    int size = 1 + 3 * 8 + 3 * 9 + texts.length * 4;
    for (byte[] t : texts) {
      size += t == null ? 0 : t.length;
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.put(FORMAT);
    for (int i = 0; i < 8; i++) {
      text(out, texts[i]);
    }
    out.putLong(r.generation());
    number(out, r.leaseExpiresAt());
    number(out, r.nextAttemptAt());
    out.putLong(r.createdAt());
    out.putLong(r.updatedAt());
    text(out, texts[8]);
    text(out, texts[9]);
    text(out, texts[10]);
    number(out, r.quarantinedAt());
    text(out, texts[11]);
    return out.array();
  }

  private static byte[] utf8(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  private static void text(ByteBuffer out, byte[] b) {
    if (b == null) {
      out.putInt(-1);
    } else {
      out.putInt(b.length).put(b);
    }
  }

  private static void number(ByteBuffer out, Long n) {
    out.put((byte) (n == null ? 0 : 1));
    out.putLong(n == null ? 0 : n);
  }

  /**
   * @throws IOException if the bytes are not an image this version wrote (the log's checksum
   *     passed, so this means a log from a newer Idem)
   */
  static RawRow decode(byte[] payload) throws IOException {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload))) {
      byte format = in.readByte();
      if (format != FORMAT) {
        throw new IOException("unknown row image format " + format + " (written by a newer Idem?)");
      }
      return new RawRow(text(in), text(in), text(in), text(in), text(in), text(in), text(in), text(in),
          in.readLong(), number(in), number(in), in.readLong(), in.readLong(), text(in), text(in), text(in),
          number(in), text(in));
    }
  }

  private static String text(DataInputStream in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    byte[] b = new byte[n];
    in.readFully(b);
    return new String(b, StandardCharsets.UTF_8);
  }

  private static Long number(DataInputStream in) throws IOException {
    boolean present = in.readBoolean();
    long v = in.readLong();
    return present ? v : null;
  }
}
