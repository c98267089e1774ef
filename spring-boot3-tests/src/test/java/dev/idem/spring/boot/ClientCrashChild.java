package dev.idem.spring.boot;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.client.RestClient;

/**
 * The app in a child JVM for {@link ClientCrashTest}: args are the data directory and, for the
 * first run, the URL to POST an order to through Boot's RestClient.Builder (untagged: the starter
 * keys and journals it). It writes {@code started} to the directory once the app runs, then sends
 * (the test kills it while the POST waits for its answer), or only runs (the restart, whose outbox
 * delivers what the crash left).
 */
public final class ClientCrashChild {
  private ClientCrashChild() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    ConfigurableApplicationContext app = new SpringApplicationBuilder(TestApp.class).properties(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "idem.owner=crash-child", // the same instance name after the restart, as a StatefulSet pod's
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.server.store=datasource").run();
    Path tmp = dir.resolve("started.tmp");
    Files.writeString(tmp, "up");
    Files.move(tmp, dir.resolve("started"), StandardCopyOption.ATOMIC_MOVE);
    if (args.length > 1) {
      RestClient client = app.getBean(RestClient.Builder.class).build();
      client.post().uri(args[1]).contentType(MediaType.APPLICATION_JSON).body("{\"item\":\"crash\"}")
          .retrieve().toBodilessEntity();
      Files.writeString(dir.resolve("answered"), "the test should have killed this JVM before the answer");
    }
  }
}
