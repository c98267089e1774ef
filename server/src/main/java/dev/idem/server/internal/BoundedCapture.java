package dev.idem.server.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Objects;

/**
 * Holds a response body back in memory, up to a cap, so that the guard can store the result
 * before the client sees it. Past the cap it stops holding: it opens the real stream (through
 * {@link Spill}), writes what it held, and passes the rest straight through. Memory per response
 * is therefore bounded by the cap.
 *
 * <p>Not thread-safe: one response is written by one thread.
 */
public final class BoundedCapture extends OutputStream {
  /** Opens the real output once the body is known to be over the cap. */
  @FunctionalInterface
  public interface Spill {
    /**
     * @return the real output, its status and headers now committed
     * @throws IOException if it cannot be opened
     */
    OutputStream open() throws IOException;
  }

  private final int cap;
  private final Spill spill;
  private ByteArrayOutputStream held = new ByteArrayOutputStream();
  private OutputStream out;
  private boolean outputFailed;

  /**
   * @param cap the most bytes held back
   * @param spill opens the real output when the cap is passed
   */
  public BoundedCapture(int cap, Spill spill) {
    this.cap = cap;
    this.spill = Objects.requireNonNull(spill, "spill");
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    if (out == null && held.size() + len > cap) {
      try {
        out = spill.open();
        held.writeTo(out);
      } catch (IOException e) {
        outputFailed = true;
        throw e;
      }
      held = null;
    }
    if (out != null) {
      try {
        out.write(b, off, len);
      } catch (IOException e) {
        outputFailed = true;
        throw e;
      }
    } else {
      held.write(b, off, len);
    }
  }

  /** Flushes only once spilled: before that, a flush would commit a response not yet stored. */
  @Override
  public void flush() throws IOException {
    if (out != null) {
      try {
        out.flush();
      } catch (IOException e) {
        outputFailed = true;
        throw e;
      }
    }
  }

  /**
   * Whether opening or writing the real output failed: mostly a client gone while an over-cap
   * body streamed. The handler had run by then, so its adapter must record the result (without
   * its body) rather than take the failure for the handler's and release the claim, which would
   * let a retry run the effect again.
   *
   * @return true once the real output threw
   */
  public boolean outputFailed() {
    return outputFailed;
  }

  /** @return true once the body passed the cap and went to the real output */
  public boolean spilled() {
    return out != null;
  }

  /** @return the body held back, or null once spilled */
  public byte[] held() {
    return held == null ? null : held.toByteArray();
  }

  /**
   * Keeps only the first {@code length} bytes held, as a container sends only the bytes a
   * Content-Length declared after them announces; does nothing once spilled (those bytes went out).
   *
   * @param length the bytes to keep, at least 0
   */
  public void truncate(int length) {
    if (held != null && held.size() > length) {
      byte[] kept = Arrays.copyOf(held.toByteArray(), length);
      held.reset();
      held.write(kept, 0, length);
    }
  }

  /** Drops what is held, as a response reset does; does nothing once spilled. */
  public void reset() {
    if (held != null) {
      held.reset();
    }
  }

  /** Nothing to close until the adapter writes the held body itself. */
  @Override
  public void close() {}
}
