package dev.idem.spring.jpa;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@link JpaApp} in a child JVM for {@link TransactionalJpaKillTest}: args are the data directory,
 * then the app's datasource properties; it writes its port to {@code port} there once it serves,
 * and runs until it is halted or killed.
 */
public final class JpaKillChild {
  private JpaKillChild() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    List<String> properties = new ArrayList<>(List.of(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "idem.server.store=datasource",
        "idem.outbox.enabled=false"));
    properties.addAll(List.of(args).subList(1, args.length));
    ConfigurableApplicationContext app = new SpringApplicationBuilder(JpaApp.class)
        .properties(properties.toArray(String[]::new)).run();
    Path tmp = dir.resolve("port.tmp");
    Files.writeString(tmp, app.getEnvironment().getProperty("local.server.port"));
    Files.move(tmp, dir.resolve("port"), StandardCopyOption.ATOMIC_MOVE);
  }
}
