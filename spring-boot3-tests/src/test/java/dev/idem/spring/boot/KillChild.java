package dev.idem.spring.boot;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The app in a child JVM for {@link TransactionalKillTest}: args are the data directory, then the
 * app's datasource properties (none: a SQLite file in that directory); it writes
 * its port to {@code port} there once it serves, and runs until it is halted or killed.
 */
public final class KillChild {
  private KillChild() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    // The app's database: the properties after the directory (PostgreSQL), else a SQLite file there.
    List<String> datasource = args.length > 1 ? List.of(args).subList(1, args.length) : List.of(
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000");
    List<String> properties = new ArrayList<>(List.of(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "idem.server.store=datasource",
        "idem.outbox.enabled=false"));
    properties.addAll(datasource);
    ConfigurableApplicationContext app = new SpringApplicationBuilder(TestApp.class)
        .properties(properties.toArray(String[]::new)).run();
    // local.server.port: set by Boot 3 and 4 alike (the web server context type moved in Boot 4).
    String port = app.getEnvironment().getProperty("local.server.port");
    Path tmp = dir.resolve("port.tmp");
    Files.writeString(tmp, port);
    Files.move(tmp, dir.resolve("port"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }
}
