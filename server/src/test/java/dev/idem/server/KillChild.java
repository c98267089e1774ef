package dev.idem.server;

import dev.idem.server.spi.Admission;
import dev.idem.server.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The server JVM of {@link GuardKillTest}: claims one operation through the guard, starts the
 * handler (writes its effect and the claim's fencing token to a file, forced to disk), then
 * SIGKILLs itself mid-handler, before completion.
 *
 * <p>Arguments: {@code sqlite <file>} or {@code postgres <port> <database>}, then the key, the
 * file for the effect, and optionally the guard's instance id.
 */
public final class KillChild {
  private KillChild() {}

  public static void main(String[] args) throws Exception {
    int i = 0;
    IdempotencyStore store;
    if (args[i++].equals("sqlite")) {
      store = JdbcIdempotencyStore.sqlite(Path.of(args[i++]));
    } else {
      PGSimpleDataSource ds = new PGSimpleDataSource();
      ds.setServerNames(new String[] {"127.0.0.1"});
      ds.setPortNumbers(new int[] {Integer.parseInt(args[i++])});
      ds.setDatabaseName(args[i++]);
      ds.setUser("postgres");
      store = JdbcIdempotencyStore.postgres(ds);
    }
    String key = args[i++];
    Path effects = Path.of(args[i++]);
    IdempotencyGuard.Builder builder = IdempotencyGuard.builder(store);
    if (i < args.length) {
      builder.instanceId(args[i]);
    }
    IdempotencyGuard guard = builder.build();
    Admission a = guard.admit(GuardKillTest.request(key));
    if (!(a instanceof Admission.Proceed p)) {
      System.out.println("not claimed: " + a);
      System.exit(3);
      return;
    }
    // The handler starts: its effect, then the kill before it can complete.
    Files.write(effects, List.of("effect " + p.claim().generation() + " " + p.claim().owner()),
        StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.SYNC);
    new ProcessBuilder("kill", "-9", Long.toString(ProcessHandle.current().pid())).inheritIO().start().waitFor();
    Thread.sleep(60_000);
    guard.complete(p.claim(), new CapturedResponse(201, Map.of(), "never".getBytes(StandardCharsets.UTF_8)));
    System.exit(4);
  }
}
