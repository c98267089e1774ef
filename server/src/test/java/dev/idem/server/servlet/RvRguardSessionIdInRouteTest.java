package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.RecordQuery;
import dev.idem.server.RecordSummary;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Review (rguard): the Servlet filter takes the record's route from {@code getRequestURI()}, which
 * keeps the path parameters, so a servlet container's session id ({@code /orders;jsessionid=...},
 * URL rewriting when the client takes no cookies) becomes part of the operation's identity:
 *
 * <ul>
 *   <li>The session id, a credential (the client's own rule refuses to journal it and redacts it
 *       even from an exception message: {@code RequestSnapshot.isSecretPathParameterByDefault},
 *       {@code AdapterSupport.untaggedOperationName}), is written in clear into the store's
 *       {@code route} column, listed by {@code guard.records(...)} and the CLI's {@code guard list},
 *       and logged in every {@code Claim{...}} line. docs/server.md: "Secrets never reach the store".</li>
 *   <li>The key is scoped by a value that is no part of the resource: a retry of the same POST
 *       (same key, same body) after the session id changed (the session timed out, or the server
 *       restarted and lost its sessions, exactly when a client retries) is a new operation to the
 *       guard, and the handler runs a second time: a second order. docs/server.md promises a key
 *       unique per caller and route, where the route is {@code METHOD /path}.</li>
 * </ul>
 *
 * <p>Code: {@code IdempotencyFilter.guardRequest} passes {@code request.getRequestURI()} as the
 * path; {@code IdempotencyGuard.prepare} makes the route {@code method + " " + path} from it.
 */
class RvRguardSessionIdInRouteTest {
  private final AtomicInteger runs = new AtomicInteger();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).purgeInterval(null).build();
  private final HttpClient http = HttpClient.newHttpClient();
  private Server server;
  private URI base;

  @BeforeEach
  void start() throws Exception {
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    // A servlet app with sessions, as one that rewrites its URLs has them.
    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.SESSIONS);
    context.addServlet(new ServletHolder(new HttpServlet() {
      @Override
      protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        int n = runs.incrementAndGet();
        resp.setStatus(201);
        resp.setContentType("application/json");
        resp.getOutputStream().write(("{\"order\":" + n + "}").getBytes(StandardCharsets.UTF_8));
      }
    }), "/*");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard, r -> "alice")), "/*",
        EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(context);
    server.start();
    base = URI.create("http://127.0.0.1:" + connector.getLocalPort());
  }

  @AfterEach
  void stop() throws Exception {
    guard.close();
    server.stop();
  }

  private HttpResponse<String> post(String pathAndParams, String key) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(URI.create(base + pathAndParams)).header("Idempotency-Key", key)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}")).build();
    return http.send(r, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theSessionIdInThePathIsNotWrittenToTheStore() throws Exception {
    HttpResponse<String> first = post("/orders;jsessionid=node0s3cr3tsess10n1d", "k-sess-1");
    assertEquals(201, first.statusCode());

    List<RecordSummary> records = guard.records(RecordQuery.all()).records();
    assertEquals(1, records.size());
    String route = records.get(0).id().route();
    assertFalse(route.contains("s3cr3tsess10n1d"),
        "the session id (a credential) is stored in clear as part of the record's route: " + route);
  }

  @Test
  void aRetryOfTheSameOrderAfterTheSessionIdChangedDoesNotRunTheHandlerAgain() throws Exception {
    HttpResponse<String> first = post("/orders;jsessionid=node0aaaaaaaaaaaaaaaa", "k-sess-2");
    // The session expired (or the server restarted): the client retries with its new session id.
    HttpResponse<String> retry = post("/orders;jsessionid=node0bbbbbbbbbbbbbbbb", "k-sess-2");

    assertEquals(201, first.statusCode());
    assertEquals(1, runs.get(), "the same POST /orders with the same key and body ran the handler again ("
        + retry.statusCode() + " " + retry.body() + "): its session id made it another operation");
  }
}
