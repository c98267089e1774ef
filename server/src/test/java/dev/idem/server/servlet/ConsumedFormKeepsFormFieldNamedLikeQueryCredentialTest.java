package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
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
 * Regression test for a defect found by review, described as it was; fixed: only the values the query gave a credential name leave a consumed form's parameters.
 *
 * <p>Review finding on 6fdcedc3 ("only access_token leaves a form's fingerprint; consumed forms").
 *
 * <p>For a form a filter ahead of the guard consumed (a CSRF check reading {@code _csrf}, Spring's
 * {@code FormContentFilter}), {@code IdempotencyFilter.readBody} fingerprints the request's
 * parameter map, which merges the query's parameters with the form's under one entry per name. To
 * keep the query's credentials out, the commit removes from that map every <em>name</em> that
 * {@code SecretQueryParameters.namesIn(getQueryString())} finds, whole entry and all values, and
 * compares case-insensitively. So when the query authenticates with {@code ?api_key=} (our own API's
 * key) and the form carries an {@code api_key} field (the third-party key an "connect your
 * Mailchimp account" endpoint stores; the commit itself calls that field "the operation's data",
 * and docs/server.md says a form's {@code api_key} "stays"), the form's value leaves the
 * fingerprint together with the query's. (The same with {@code ?API_KEY=} and a form field
 * {@code api_key}, which are even different map entries.) The query's values come first in the
 * map's array; only those are the credential.
 *
 * <p>Consequence: a client that reuses an idempotency key for another operation that differs only
 * in that form field (connects another account, corrects a mistyped key) is not refused 422 "key
 * reused": it is replayed the first operation's answer. It believes the new key was saved while the
 * server still holds the old one. The same request with the form not consumed (the guard reads the
 * body) is refused, as it should be.
 */
class ConsumedFormKeepsFormFieldNamedLikeQueryCredentialTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final AtomicInteger runs = new AtomicInteger();
  private IdempotencyGuard guard;
  private Server server;
  private URI base;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).purgeInterval(null).build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new ConsumedFormQueryCredentialTest.Orders(runs)), "/*");
    // A filter ahead of the guard that reads a parameter (as a CSRF check does): the form is consumed.
    Filter readsParameters = (req, res, chain) -> {
      req.getParameter("_csrf");
      chain.doFilter(req, res);
    };
    context.addFilter(new FilterHolder(readsParameters), "/*", EnumSet.of(DispatcherType.REQUEST));
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard, r -> "alice")), "/*",
        EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(context);
    server.start();
    base = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
  }

  @AfterEach
  void stop() throws Exception {
    server.stop();
    guard.close();
  }

  @Test
  void aKeyReusedWithAnotherFormApiKeyIsRefusedWhenTheQueryAuthenticatesWithApiKey() throws Exception {
    HttpResponse<String> first = post("integrations/mailchimp?api_key=our-api-key",
        "list=newsletter&api_key=old-mailchimp-key-us1");
    HttpResponse<String> other = post("integrations/mailchimp?api_key=our-api-key",
        "list=newsletter&api_key=new-mailchimp-key-us2");

    assertEquals(200, first.statusCode(), first.body());
    assertEquals(422, other.statusCode(), "another form api_key (the operation's data) under the same key was"
        + " answered " + other.statusCode() + " replayed=" + other.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER)
        .orElse("no") + ": the consumed form lost its api_key field with the query's api_key credential");
  }

  private HttpResponse<String> post(String path, String form) throws Exception {
    return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/x-www-form-urlencoded").header("Idempotency-Key", "k-connect")
        .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
