package dev.idem.examples.exit;

import dev.idem.examples.childjvm.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How the app's {@code main} ends once it has printed what it was told, without closing anything:
 * the three ordinary ways a JVM stops that a shutdown hook can see. The child calls {@link #end()};
 * the parent test calls {@link #await(Process, Path)}.
 */
enum MainEnding {
  /** {@code main} returns (every thread Idem started must then let the JVM exit). */
  RETURN,
  /** {@code System.exit(0)}. */
  EXIT,
  /** The app waits until the parent sends SIGTERM ({@code Process.destroy()}), as a service is stopped. */
  SIGTERM;

  /** Printed by the child when it has printed every outcome, just before it ends. */
  static final String DONE = "DONE";

  /** The longest a child waits for its SIGTERM, so that a forgotten child still ends. */
  private static final long SIGTERM_WAIT_MS = TimeUnit.MINUTES.toMillis(2);

  /** In the child, as main's last statement. */
  void end() throws InterruptedException {
    System.out.println(DONE);
    System.out.flush();
    switch (this) {
      case RETURN -> {
        // nothing: main returns
      }
      case EXIT -> System.exit(0);
      case SIGTERM -> Thread.sleep(SIGTERM_WAIT_MS);
    }
  }

  /**
   * In the parent: waits for the child to end this way (sending the SIGTERM itself).
   *
   * @return the child's exit status: 0 after RETURN and EXIT, 143 after SIGTERM
   * @throws AssertionError if the child does not end on its own, or on SIGTERM, within a minute
   */
  int await(Process child, Path log) throws Exception {
    if (this == SIGTERM) {
      if (!ChildJvm.awaitLine(child, log, DONE, Duration.ofSeconds(60))) {
        child.destroyForcibly();
        throw new AssertionError("the child never printed " + DONE + ":\n" + Files.readString(log));
      }
      child.destroy(); // SIGTERM: shutdown hooks run, finally blocks do not
    }
    if (!child.waitFor(60, TimeUnit.SECONDS)) {
      child.destroyForcibly();
      child.waitFor(30, TimeUnit.SECONDS);
      throw new AssertionError("the child did not exit within 60 s after " + this
          + " (a non-daemon thread keeps the JVM alive?):\n" + Files.readString(log));
    }
    return child.exitValue();
  }

  /** The exit status of a child that ended this way. */
  int expectedStatus() {
    return this == SIGTERM ? 128 + 15 : 0;
  }
}
