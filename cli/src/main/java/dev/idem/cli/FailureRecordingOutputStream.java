package dev.idem.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Optional;

/**
 * The CLI's standard output: passes writes to the stream below and remembers the first
 * {@link IOException} one of them threw, so that the exit status can be chosen from the failure
 * itself (a full disk is not a reader that stopped). {@code System.out} and a {@code PrintWriter}
 * keep only "an error happened", and {@code System.out} keeps writing after it.
 *
 * <p>After a failure nothing more reaches the stream below: every later write or flush throws the
 * first failure again at once (the {@code PrintWriter} above swallows it), so a listing that goes
 * on is not pushed, line after line, at a dead pipe or a full disk. {@link #close} does not close
 * the stream below: standard output belongs to the process. Not thread-safe: the CLI writes from
 * one thread.
 */
final class FailureRecordingOutputStream extends OutputStream {
  private final OutputStream target;
  private IOException failure;

  FailureRecordingOutputStream(OutputStream target) {
    this.target = target;
  }

  @Override
  public void write(int b) throws IOException {
    ensureHealthy();
    try {
      target.write(b);
    } catch (IOException e) {
      throw failed(e);
    }
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    ensureHealthy();
    try {
      target.write(b, off, len);
    } catch (IOException e) {
      throw failed(e);
    }
  }

  @Override
  public void flush() throws IOException {
    ensureHealthy();
    try {
      target.flush();
    } catch (IOException e) {
      throw failed(e);
    }
  }

  /** Flushes what can still be written; the stream below stays open. */
  @Override
  public void close() throws IOException {
    flush();
  }

  /** The first write failure, if any write failed. */
  Optional<IOException> failure() {
    return Optional.ofNullable(failure);
  }

  private void ensureHealthy() throws IOException {
    if (failure != null) {
      throw failure;
    }
  }

  private IOException failed(IOException e) {
    failure = e;
    return e;
  }
}
