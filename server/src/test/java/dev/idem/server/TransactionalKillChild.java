package dev.idem.server;

import com.sun.net.httpserver.HttpServer;
import dev.idem.server.support.AppDb;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * The server JVM of {@link TransactionalKillTest}: serves one transactional request and SIGKILLs
 * itself at the point the mode names:
 *
 * <ul>
 *   <li>{@code before-commit}: inside the handler, after its write, before the commit;</li>
 *   <li>{@code after-commit}: once the guard has committed, before any response;</li>
 *   <li>{@code during-response}: behind a real HTTP server, after the commit, with the status line
 *       and half the body sent to the parent's client.</li>
 * </ul>
 *
 * <p>Arguments: {@code sqlite <file>} or {@code postgres <port> <database>}, then the key, the mode
 * and a directory for the markers it leaves ({@code handler}, {@code committed}, {@code port}).
 */
public final class TransactionalKillChild {
  private TransactionalKillChild() {}

  public static void main(String[] args) throws Exception {
    AppDb db = AppDb.fromArgs(args, 0);
    int i = AppDb.argCount(args, 0);
    String key = args[i++];
    String mode = args[i++];
    Path out = Path.of(args[i]);
    JdbcIdempotencyStore store = db.openStore();
    IdempotencyGuard guard = IdempotencyGuard.builder(store).build();
    TransactionalHandler handler = (c, claim, body) -> {
      AppDb.insertOrder(c, claim.operationId(), new String(body, StandardCharsets.UTF_8));
      mark(out.resolve("handler"), "wrote " + claim.operationId());
      if (mode.equals("before-commit")) {
        die();
      }
      return CapturedResponse.json(201, "{\"id\":\"" + claim.operationId() + "\"}");
    };
    if (mode.equals("during-response")) {
      HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
      server.createContext("/orders", exchange -> {
        GuardResponse answer;
        try {
          answer = guard.inTransaction(db.dataSource(), new GuardRequest("POST", "/orders", null, "application/json",
              List.of(key), "tenant-1", GuardRequest.BodyReader.of(exchange.getRequestBody().readAllBytes())), handler);
        } catch (java.sql.SQLException e) {
          throw new java.io.IOException(e);
        }
        mark(out.resolve("committed"), Integer.toString(answer.status()));
        byte[] body = answer.body();
        exchange.sendResponseHeaders(answer.status(), body.length);
        OutputStream os = exchange.getResponseBody();
        os.write(body, 0, body.length / 2);
        os.flush();
        die();
      });
      server.start();
      Path tmp = out.resolve("port.tmp");
      Files.writeString(tmp, Integer.toString(server.getAddress().getPort()));
      Files.move(tmp, out.resolve("port"), StandardCopyOption.ATOMIC_MOVE);
      Thread.sleep(60_000);
      System.exit(5);
    }
    GuardResponse answer = guard.inTransaction(db.dataSource(), TransactionalKillTest.request(key), handler);
    mark(out.resolve("committed"), Integer.toString(answer.status()));
    die();
  }

  private static void mark(Path file, String line) {
    try {
      Files.write(file, List.of(line), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND, StandardOpenOption.SYNC);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static void die() {
    try {
      new ProcessBuilder("kill", "-9", Long.toString(ProcessHandle.current().pid())).inheritIO().start().waitFor();
      Thread.sleep(60_000);
    } catch (Exception e) {
      // fall through
    }
    System.exit(4);
  }
}
