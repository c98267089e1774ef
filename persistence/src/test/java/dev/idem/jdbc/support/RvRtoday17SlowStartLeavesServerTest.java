package dev.idem.jdbc.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * ac3aa328 says PostgresCluster.run "killed only runuser on its 60 s timeout, leaving pg_ctl (and a
 * server it had started) running" and now "ends the whole tree". But {@code startServer} runs
 * {@code pg_ctl start -w -t 30}: pg_ctl gives up on a slow server after 30 s, exits 1 ("server did
 * not start in time") and leaves the postmaster it forked starting, orphaned. run's 60 s timeout is
 * never reached on that path, so the new destroy never runs: the command "failed", start() retries on
 * new ports (each refused by the first server's lock file), deletes the cluster's directory and
 * throws, with the server a start left behind still running past the test (its port, its CPU in
 * crash recovery or under load, which is why it was slow in the first place). The path the commit
 * names as fixed still leaks.
 *
 * <p>Deterministic: a fake bin directory whose {@code pg_ctl start} does what pg_ctl does on its own
 * timeout: forks a "server" (here a {@code sleep}) and exits 1; start's retries are refused, as the
 * real server's lock file refuses them. No PostgreSQL is needed.
 */
class RvRtoday17SlowStartLeavesServerTest {
  private final List<ProcessHandle> seen = new ArrayList<>();
  private Path bin;

  @AfterEach
  void endWhatIsLeft() throws IOException {
    seen.forEach(ProcessHandle::destroyForcibly);
    if (bin != null) {
      try (Stream<Path> all = Files.list(bin)) {
        for (Path p : all.toList()) {
          Files.deleteIfExists(p);
        }
      }
      Files.deleteIfExists(bin);
    }
  }

  @Test
  void aStartThatPgCtlGaveUpOnLeavesNoServerRunning() throws Exception {
    bin = Files.createTempDirectory("rv17-pg-bin-");
    Files.setPosixFilePermissions(bin, PosixFilePermissions.fromString("rwxrwxrwx")); // runuser -u postgres
    Path pids = bin.resolve("servers.pid");
    script("initdb", "exit 0");
    script("pg_ctl", String.join("\n",
        "case \"$1\" in",
        "  start)",
        "    if [ -s '" + pids + "' ]; then",
        "      echo 'FATAL:  lock file \"postmaster.pid\" already exists' >&2; exit 1  # a retry: refused",
        "    fi",
        "    sleep 300 &   # the postmaster pg_ctl forked, still starting",
        "    echo $! >> '" + pids + "'",
        "    echo 'waiting for server to start.... stopped waiting'",
        "    echo 'pg_ctl: server did not start in time' >&2",
        "    exit 1;;",
        "  stop)   # stops the server its pid file names, as pg_ctl stop does",
        "    [ -s '" + pids + "' ] && kill -9 $(cat '" + pids + "') 2>/dev/null",
        "    exit 0;;",
        "  *) exit 0;;",
        "esac"));

    assertThrows(IOException.class, () -> PostgresCluster.start(bin), "premise: the start fails");

    List<Long> left = new ArrayList<>();
    for (String line : Files.readAllLines(pids)) {
      Optional<ProcessHandle> server = ProcessHandle.of(Long.parseLong(line.strip()));
      server.ifPresent(seen::add);
      // An end already under way (SIGKILL) takes a moment: wait for it, bounded.
      server.ifPresent(s -> s.onExit().completeOnTimeout(null, 3, TimeUnit.SECONDS).join());
      if (server.map(ProcessHandle::isAlive).orElse(false)) {
        left.add(server.get().pid());
      }
    }
    assertEquals(List.of(), left, "servers that pg_ctl start left behind when it gave up waiting (-t 30) still run"
        + " after PostgresCluster.start failed");
  }

  private void script(String name, String body) throws IOException {
    Path p = bin.resolve(name);
    Files.writeString(p, "#!/bin/sh\n" + body + "\n");
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
  }
}
