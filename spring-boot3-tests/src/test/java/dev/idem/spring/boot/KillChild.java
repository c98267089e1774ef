package dev.idem.spring.boot;

import java.nio.file.Files;
import java.nio.file.Path;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The app in a child JVM for {@link TransactionalKillTest}: args are the data directory; it writes
 * its port to {@code port} there once it serves, and runs until it is halted or killed.
 */
public final class KillChild {
  private KillChild() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    ConfigurableApplicationContext app = new SpringApplicationBuilder(TestApp.class).properties(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.server.store=datasource",
        "idem.outbox.enabled=false").run();
    // local.server.port: set by Boot 3 and 4 alike (the web server context type moved in Boot 4).
    String port = app.getEnvironment().getProperty("local.server.port");
    Path tmp = dir.resolve("port.tmp");
    Files.writeString(tmp, port);
    Files.move(tmp, dir.resolve("port"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }
}
