package dev.idem.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.Charset;
import java.nio.charset.CharsetEncoder;

/**
 * The CLI's standard output and error in the charset the locale gives, with every character that
 * charset cannot encode escaped ({@link TerminalText#encodable}) instead of printed as {@code ?}.
 * Escaping here, where the charset is known, covers every line the CLI prints (a listing, an
 * {@code idem: } line quoting an identity) without telling each command the charset; {@link
 * IdemCli#run} on a caller's writers prints as it always did.
 *
 * <p>A high surrogate at the end of one write is held back until the next, so that a pair split
 * across two writes is judged whole. Thread-safe: every method holds {@link #lock}.
 */
final class EncodableWriter extends Writer {
  private final Writer out;
  private final CharsetEncoder encoder;
  private char heldHighSurrogate;

  private EncodableWriter(Writer out, CharsetEncoder encoder) {
    this.out = out;
    this.encoder = encoder;
  }

  /**
   * A writer encoding to {@code stream} in {@code charset}: escaping, unless the charset is a
   * Unicode one, which encodes every character (an unpaired surrogate is escaped by {@link
   * TerminalText#safe} already).
   */
  static Writer of(OutputStream stream, Charset charset) {
    Writer writer = new OutputStreamWriter(stream, charset);
    return charset.name().startsWith("UTF-") ? writer : new EncodableWriter(writer, charset.newEncoder());
  }

  @Override
  public void write(char[] chars, int offset, int length) throws IOException {
    synchronized (lock) {
      StringBuilder text = new StringBuilder(length + 1);
      if (heldHighSurrogate != 0) {
        text.append(heldHighSurrogate);
        heldHighSurrogate = 0;
      }
      text.append(chars, offset, length);
      int last = text.length() - 1;
      if (last >= 0 && Character.isHighSurrogate(text.charAt(last))) {
        heldHighSurrogate = text.charAt(last);
        text.setLength(last);
      }
      out.write(TerminalText.encodable(text, encoder));
    }
  }

  @Override
  public void flush() throws IOException {
    synchronized (lock) {
      out.flush();
    }
  }

  @Override
  public void close() throws IOException {
    synchronized (lock) {
      if (heldHighSurrogate != 0) {
        out.write(TerminalText.encodable(String.valueOf(heldHighSurrogate), encoder));
        heldHighSurrogate = 0;
      }
      out.close();
    }
  }
}
