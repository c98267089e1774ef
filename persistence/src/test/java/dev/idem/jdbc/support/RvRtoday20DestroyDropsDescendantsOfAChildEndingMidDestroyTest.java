package dev.idem.jdbc.support;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * 65685711 made {@link ChildJvm#destroy(Process)} list the child's descendants first and then drop
 * the whole list when {@code child.isAlive()} is false <em>after</em> the listing. A child that was
 * alive while it was listed, and ends in between (it was already exiting: a JVM at the end of its
 * main, a shell whose command failed, a child a test's SIGTERM or crash is taking down while
 * {@code ChildProcesses.close()} or run's timeout path ends it), had real descendants in that list:
 * they were its children when listed, so no pid reuse is involved, and once it has ended they are
 * orphans nobody can list any more. destroy now throws that list away and SIGKILLs nothing but the
 * already ended child: its server, its {@code sleep}, its grandchild JVM outlive the test (ports,
 * files, CPU on CI's two cores), the leak the childjvm work set out to close. The pid-reuse guard
 * belongs before the listing (a child not yet reaped cannot have its pid reused), not after it.
 *
 * <p>Deterministic: the child is a real {@code sh} with a real {@code sleep} child; the child is
 * ended (SIGKILL, reaped) exactly between the listing and the check, by a {@link Process} wrapper
 * whose {@code descendants()} returns the real listing and then ends the real child, which is the
 * interleaving a child ending on its own makes. No timing or sleep is relied on.
 */
class RvRtoday20DestroyDropsDescendantsOfAChildEndingMidDestroyTest {
  private final List<ProcessHandle> seen = new ArrayList<>();

  @AfterEach
  void endWhatIsLeft() {
    seen.forEach(ProcessHandle::destroyForcibly);
  }

  @Test
  void aChildThatEndsRightAfterItsDescendantsWereListedHasThemEnded() throws Exception {
    Process real = new ProcessBuilder("sh", "-c", "sleep 300 & echo $!; wait").start();
    seen.add(real.toHandle());
    long sleepPid = Long.parseLong(new BufferedReader(new InputStreamReader(real.getInputStream(),
        StandardCharsets.UTF_8)).readLine().strip());
    Optional<ProcessHandle> sleep = ProcessHandle.of(sleepPid);
    assertTrue(sleep.isPresent() && sleep.get().isAlive(), "premise: the child's own child runs");
    seen.add(sleep.get());

    ChildJvm.destroy(new EndsAfterListing(real));

    assertFalse(real.isAlive(), "premise: the child has ended");
    boolean ended = sleep.get().onExit().completeOnTimeout(null, 5, TimeUnit.SECONDS).thenApply(h -> true)
        .join() && !sleep.get().isAlive();
    assertTrue(ended, "ChildJvm.destroy left running (pid " + sleepPid + ") the child's own child, listed while"
        + " the child was alive, because the child ended before the isAlive() check: an orphan outlives the test");
  }

  /** The real child, ending (SIGKILL, reaped) just after its descendants were listed. */
  private static final class EndsAfterListing extends Process {
    private final Process real;

    EndsAfterListing(Process real) {
      this.real = real;
    }

    @Override
    public Stream<ProcessHandle> descendants() {
      List<ProcessHandle> listed = real.descendants().toList();
      real.destroyForcibly();
      try {
        real.waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return listed.stream();
    }

    @Override
    public Stream<ProcessHandle> children() {
      return real.children();
    }

    @Override
    public OutputStream getOutputStream() {
      return real.getOutputStream();
    }

    @Override
    public InputStream getInputStream() {
      return real.getInputStream();
    }

    @Override
    public InputStream getErrorStream() {
      return real.getErrorStream();
    }

    @Override
    public int waitFor() throws InterruptedException {
      return real.waitFor();
    }

    @Override
    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
      return real.waitFor(timeout, unit);
    }

    @Override
    public int exitValue() {
      return real.exitValue();
    }

    @Override
    public void destroy() {
      real.destroy();
    }

    @Override
    public Process destroyForcibly() {
      real.destroyForcibly();
      return this;
    }

    @Override
    public boolean isAlive() {
      return real.isAlive();
    }

    @Override
    public long pid() {
      return real.pid();
    }

    @Override
    public ProcessHandle toHandle() {
      return real.toHandle();
    }
  }
}
