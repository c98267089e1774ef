package dev.idem.jdbc.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A throwaway PostgreSQL cluster: initdb into a temp directory, pg_ctl start on a free port with a
 * private socket directory, databases on demand, and stop plus delete at the end. Runs initdb and
 * the server as the {@code postgres} user when the tests run as root (initdb refuses root).
 */
public final class PostgresCluster implements AutoCloseable {
  private final Path bin;
  private final Path root;
  private final Path data;
  private final int port;
  private final boolean asPostgresUser;
  private final AtomicInteger databases = new AtomicInteger();

  private PostgresCluster(Path bin, Path root, int port, boolean asPostgresUser) {
    this.bin = bin;
    this.root = root;
    this.data = root.resolve("data");
    this.port = port;
    this.asPostgresUser = asPostgresUser;
  }

  /**
   * The newest {@code /usr/lib/postgresql/<version>/bin} with initdb and pg_ctl, if any. The system
   * property {@code idem.postgres.home} replaces {@code /usr/lib/postgresql} (to try the skip path).
   */
  public static Optional<Path> findBinaries() {
    Path base = Path.of(System.getProperty("idem.postgres.home", "/usr/lib/postgresql"));
    if (!Files.isDirectory(base)) {
      return Optional.empty();
    }
    try (Stream<Path> versions = Files.list(base)) {
      return versions.map(v -> v.resolve("bin"))
          .filter(b -> Files.isExecutable(b.resolve("initdb")) && Files.isExecutable(b.resolve("pg_ctl")))
          .max(Comparator.comparing(b -> versionOf(b.getParent().getFileName().toString())));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static int versionOf(String name) {
    try {
      return Integer.parseInt(name.replaceAll("\\D.*", ""));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** Starts a cluster with the binaries in {@code bin}. */
  public static PostgresCluster start(Path bin) throws IOException, InterruptedException {
    boolean root = "root".equals(System.getProperty("user.name"));
    Path dir = Files.createTempDirectory("idem-pg-");
    if (root) {
      UserPrincipal pg = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
      Files.setOwner(dir, pg);
    }
    IOException last = null;
    for (int tries = 0; tries < 3; tries++) {
      PostgresCluster c = new PostgresCluster(bin, dir, freePort(), root);
      try {
        if (tries == 0) {
          c.run(List.of(bin.resolve("initdb").toString(), "-A", "trust", "-U", "postgres", "-E", "UTF8",
              "--no-sync", "-D", c.data.toString()));
        }
        c.startServer();
        return c;
      } catch (IOException e) {
        last = e;
      }
    }
    deleteTree(dir);
    throw last;
  }

  /** Starts the server on this cluster's port (pg_ctl start, waiting until it accepts connections). */
  private void startServer() throws IOException, InterruptedException {
    try {
      run(List.of(bin.resolve("pg_ctl").toString(), "start", "-w", "-t", "30", "-D", data.toString(),
          "-l", root.resolve("server.log").toString(),
          "-o", "-p " + port + " -k " + root + " -c listen_addresses=127.0.0.1 -c max_connections=60"));
    } catch (IOException startFailed) {
      // pg_ctl gives up on a slow server after its -t and exits 1, leaving the postmaster it forked
      // starting, orphaned beyond run's reach: stopped through its pid file, or it outlives the test.
      try {
        run(List.of(bin.resolve("pg_ctl").toString(), "stop", "-m", "immediate", "-w", "-D", data.toString()));
      } catch (IOException stopFailed) {
        startFailed.addSuppressed(stopFailed); // none running: nothing to stop
      }
      throw startFailed;
    }
  }

  /**
   * Stops the server with pg_ctl's {@code mode} ({@code fast}: clients disconnected, a clean
   * checkpoint; {@code immediate}: no checkpoint, crash recovery at the next start), then starts it
   * again on the same port: a database restart, as a fleet's clients see it.
   *
   * @param mode {@code fast} or {@code immediate}
   */
  public void restart(String mode) throws IOException, InterruptedException {
    run(List.of(bin.resolve("pg_ctl").toString(), "stop", "-m", mode, "-w", "-D", data.toString()));
    startServer();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private void run(List<String> command) throws IOException, InterruptedException {
    List<String> full = new ArrayList<>();
    if (asPostgresUser) {
      full.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    full.addAll(command);
    Path out = root.resolve("cmd.log");
    Process p = new ProcessBuilder(full).directory(root.toFile()).redirectErrorStream(true)
        .redirectOutput(out.toFile()).start();
    boolean ended;
    try {
      ended = p.waitFor(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      ChildJvm.destroy(p);
      throw e;
    }
    if (!ended) {
      // With what it started: runuser's pg_ctl, and the server a start left behind.
      ChildJvm.destroy(p);
      throw new IOException("timed out: " + String.join(" ", command));
    }
    if (p.exitValue() != 0) {
      String log = Files.exists(root.resolve("server.log")) ? Files.readString(root.resolve("server.log")) : "";
      throw new IOException("failed (" + p.exitValue() + "): " + String.join(" ", command) + "\n"
          + Files.readString(out) + "\n" + log);
    }
  }

  public int port() {
    return port;
  }

  /** A DataSource to database {@code name} on this cluster. */
  public PGSimpleDataSource dataSource(String name) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setServerNames(new String[] {"127.0.0.1"});
    ds.setPortNumbers(new int[] {port});
    ds.setDatabaseName(name);
    ds.setUser("postgres");
    return ds;
  }

  /** Creates a fresh, empty database and returns its name. */
  public String createDatabase() throws SQLException {
    String name = "idem_test_" + databases.incrementAndGet();
    try (Connection c = dataSource("postgres").getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + name);
    }
    return name;
  }

  @Override
  public void close() throws IOException, InterruptedException {
    try {
      run(List.of(bin.resolve("pg_ctl").toString(), "stop", "-m", "immediate", "-w", "-D", data.toString()));
    } finally {
      deleteTree(root);
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
