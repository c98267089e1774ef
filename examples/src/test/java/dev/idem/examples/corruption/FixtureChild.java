package dev.idem.examples.corruption;

import java.nio.file.Path;

/** A child JVM's main: writes one store's fixture and halts without closing it (kill -9). */
public final class FixtureChild {
  private FixtureChild() {
  }

  public static void main(String[] args) throws Exception {
    Subject subject = CorruptionRunTest.SUBJECTS.stream().filter(s -> s.name().equals(args[0])).findFirst()
        .orElseThrow();
    subject.writeAndHalt(Path.of(args[1]));
    Runtime.getRuntime().halt(Subject.HALT_CODE); // in case writeAndHalt returned
  }
}
