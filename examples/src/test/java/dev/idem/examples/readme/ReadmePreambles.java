package dev.idem.examples.readme;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What each README or docs/ snippet assumes, keyed by the heading it sits under ({@link ReadmeBlock#key()}).
 * Keep these small: a name declared here is one the README leaves to the app (its interceptor, its
 * Jetty context, a journal built in an earlier snippet). A class the snippet uses from Idem or a
 * library needs only its import here; a snippet that shows its own imports gets none of them.
 */
final class ReadmePreambles {
  private ReadmePreambles() {}

  /** Built in the OkHttp quickstart, used by the snippets that refer back to it. */
  private static final List<String> QUICKSTART_IMPORTS = List.of(
      "import dev.idem.core.IdempotentExecutor;",
      "import dev.idem.okhttp.IdemOkHttp;",
      "import okhttp3.OkHttpClient;");

  private static final List<String> QUICKSTART_MEMBERS = List.of(
      "IdempotentExecutor executor;",
      "IdemOkHttp idem;",
      "OkHttpClient client;");

  static Map<String, Preamble> all() {
    Map<String, Preamble> p = new LinkedHashMap<>();
    // The quickstarts show their own imports (and run as written: .ci/packaging-test); only what
    // they leave to the app is declared here, the names their packaging-test marker lists as given.
    p.put("Quickstart: OkHttp and Retrofit", Preamble.statements(
        List.of("import java.nio.file.Path;"),
        List.of("Path dir;", "String url;", "String json;")));
    p.put("Quickstart: java.net.http", Preamble.statements(
        List.of("import java.net.http.HttpRequest;", "import java.nio.file.Path;"),
        List.of("Path dir;", "HttpRequest request;")));
    // docs/spring.md: the snippets show their imports; the app's builders (injected) and its own types are given.
    p.put("docs/spring.md: Client: RestClient, RestTemplate and WebClient", Preamble.statements(
        List.of("import org.springframework.web.client.RestClient;"),
        List.of("RestClient.Builder restClientBuilder;", "Object order;")));
    p.put("docs/spring.md: Client: RestClient, RestTemplate and WebClient #2", Preamble.statements(
        List.of("import org.springframework.web.reactive.function.client.WebClient;"),
        List.of("WebClient.Builder webClientBuilder;", "Object order;")));
    p.put("docs/spring.md: Client: RestClient, RestTemplate and WebClient #3", Preamble.statements(
        List.of("import dev.idem.spring.client.IdempotentCall;", "import java.time.Duration;",
            "import org.springframework.web.reactive.function.client.WebClient;", "import reactor.core.publisher.Mono;",
            "import reactor.util.retry.Retry;"),
        List.of("WebClient webClient;", "Object order;")));
    p.put("docs/spring.md: Client: RestClient, RestTemplate and WebClient #4", Preamble.statements(
        List.of("import dev.idem.core.IdempotentExecutor;", "import org.springframework.web.client.RestClient;"),
        List.of("RestClient.Builder restClientBuilder;", "IdempotentExecutor executor;", "Object order;")));
    p.put("docs/spring.md: Client: RestClient, RestTemplate and WebClient #5", Preamble.members(
        List.of(), List.of("interface Tokens { String current(); }")));
    p.put("docs/spring.md: Server: the guard", Preamble.members(List.of(), List.of()));
    p.put("docs/spring.md: Server: the guard #2", Preamble.members(
        List.of("import java.util.List;", "import org.springframework.boot.web.servlet.FilterRegistrationBean;",
            "import org.springframework.context.annotation.Bean;",
            "import org.springframework.web.cors.CorsConfiguration;",
            "import org.springframework.web.cors.UrlBasedCorsConfigurationSource;",
            "import org.springframework.web.filter.CorsFilter;"),
        List.of()));
    // The README's Spring Boot quickstart is a whole app class: its imports are all written.
    p.put("Quickstart: Spring Boot", Preamble.members(List.of(), List.of()));
    p.put("docs/spring.md: Webhooks", Preamble.members(
        List.of(), List.of("interface Payments { void markPaid(String eventId); }")));
    p.put("docs/client.md: Asynchronous calls without held threads (OkHttp, Retrofit)", Preamble.statements(
        List.of(
            "import dev.idem.okhttp.IdemOkHttp;",
            "import dev.idem.okhttp.IdempotentOperation;",
            "import okhttp3.Call;",
            "import okhttp3.Callback;",
            "import okhttp3.OkHttpClient;",
            "import okhttp3.Request;",
            "import okhttp3.RequestBody;",
            "import okhttp3.ResponseBody;"),
        List.of("IdemOkHttp idem;", "OkHttpClient client;", "Request request;", "Callback callback;")));
    p.put("docs/client.md: Asynchronous calls without held threads (OkHttp, Retrofit) #2", Preamble.statements(
        List.of(
            "import dev.idem.okhttp.IdemOkHttp;",
            "import dev.idem.okhttp.IdempotentOperation;",
            "import okhttp3.OkHttpClient;",
            "import okhttp3.RequestBody;",
            "import okhttp3.ResponseBody;",
            "import retrofit2.Call;",
            "import retrofit2.Retrofit;",
            "import retrofit2.http.Body;",
            "import retrofit2.http.POST;",
            "import retrofit2.http.Tag;"),
        List.of("IdemOkHttp idem;", "OkHttpClient client;")));
    p.put("docs/client.md: One key per business reference", Preamble.statements(
        List.of(
            "import dev.idem.core.IdempotentExecutor;",
            "import dev.idem.jdbc.JdbcJournal;",
            "import dev.idem.okhttp.IdempotentOperation;",
            "import okhttp3.Request;",
            "import okhttp3.RequestBody;"),
        List.of("JdbcJournal journal;", "byte[] secretBytes;", "String url;", "RequestBody body;")));
    p.put("docs/client.md: A timeout per attempt", Preamble.statements(
        List.of("import dev.idem.core.RetryPolicy;", "import java.time.Duration;"),
        List.of()));
    p.put("Resume after a restart", Preamble.statements(
        concat(QUICKSTART_IMPORTS, List.of(
            "import dev.idem.core.IdempotencyKey;",
            "import dev.idem.core.OperationState;",
            "import dev.idem.core.Outcome;",
            "import dev.idem.core.resume.ResumeHandler;",
            "import java.util.Map;")),
        concat(QUICKSTART_MEMBERS, List.of(
            "Orders orders;",
            "interface Orders { void confirm(Outcome outcome); void flag(IdempotencyKey key, OperationState state); }"))));
    // Shows its own imports; the app's names only.
    p.put("Queued delivery (outbox)", Preamble.statements(
        List.of("import java.net.http.HttpRequest;", "import java.nio.file.Path;"),
        List.of("Path dir;", "String url;", "String json;", "String token;", "HttpRequest request;")));
    p.put("docs/client.md: Queued delivery with java.net.http", p.get("Queued delivery (outbox)"));
    p.put("docs/client.md: Which statuses your server uses", Preamble.statements(
        List.of(
            "import dev.idem.core.IdempotentExecutor;",
            "import dev.idem.core.ProtocolStatuses;",
            "import dev.idem.jdbc.JdbcJournal;"),
        List.of("JdbcJournal journal;")));
    p.put("docs/client.md: A key still in flight is a wait", Preamble.statements(
        List.of(
            "import dev.idem.core.DelayFunction;",
            "import dev.idem.core.RetryPolicy;",
            "import java.time.Duration;"),
        List.of()));
    // Shows its own imports of Idem's classes: only the app's objects are declared here.
    p.put("docs/client.md: Custom policies, resilience4j, metrics", Preamble.statements(
        List.of(
            "import dev.idem.jdbc.JdbcJournal;",
            "import io.github.resilience4j.retry.RetryConfig;",
            "import io.micrometer.core.instrument.MeterRegistry;"),
        List.of("JdbcJournal journal;", "MeterRegistry meterRegistry;", "RetryConfig retryConfig;")));
    // A test class's members; the key is whatever the app's call returned.
    p.put("docs/client.md: Testing your client", Preamble.members(
        List.of(
            "import static org.junit.jupiter.api.Assertions.assertEquals;",
            "import dev.idem.testkit.Fault;",
            "import dev.idem.testkit.IdempotentServer;",
            "import dev.idem.testkit.IdempotentServerExtension;",
            "import org.junit.jupiter.api.Test;",
            "import org.junit.jupiter.api.extension.RegisterExtension;"),
        List.of("String key;")));
    p.put("docs/client.md: Secrets stay out of the journal", Preamble.statements(
        List.of("import dev.idem.core.IdempotentExecutor;", "import java.util.Set;"),
        List.of()));
    p.put("The server half: an idempotency guard for Java services", Preamble.statements(
        List.of(
            "import com.sun.net.httpserver.HttpHandler;",
            "import com.sun.net.httpserver.HttpServer;",
            "import dev.idem.server.IdempotencyGuard;",
            "import dev.idem.server.spi.IdempotencyStore;",
            "import dev.idem.server.JdbcIdempotencyStore;",
            "import dev.idem.server.jdkhttp.IdempotencyHttpFilter;",
            "import dev.idem.server.servlet.IdempotencyFilter;",
            "import jakarta.servlet.DispatcherType;",
            "import java.nio.file.Path;",
            "import java.util.EnumSet;",
            "import org.eclipse.jetty.ee10.servlet.FilterHolder;",
            "import org.eclipse.jetty.ee10.servlet.ServletContextHandler;"),
        List.of("ServletContextHandler context;", "HttpServer server;", "HttpHandler ordersHandler;")));
    p.put("Receiving webhooks", Preamble.statements(
        List.of(
            "import com.sun.net.httpserver.HttpServer;",
            "import dev.idem.webhooks.JdkWebhookHandler;",
            "import dev.idem.webhooks.SignatureScheme;",
            "import dev.idem.webhooks.WebhookEvent;",
            "import dev.idem.webhooks.WebhookInbox;",
            "import dev.idem.webhooks.WebhookProcessor;",
            "import dev.idem.webhooks.WebhookReceiver;",
            "import dev.idem.webhooks.WebhookSource;",
            "import dev.idem.webhooks.servlet.WebhookServlet;",
            "import java.nio.file.Path;",
            "import java.util.concurrent.Executors;",
            "import org.eclipse.jetty.ee10.servlet.ServletContextHandler;",
            "import org.eclipse.jetty.ee10.servlet.ServletHolder;"),
        List.of("ServletContextHandler context;", "HttpServer server;", "void fulfil(WebhookEvent event) { }")));
    // docs/server.md and docs/webhooks.md show their own imports; only the app's names here.
    p.put("docs/server.md: Quickstart: JDK `HttpServer` filter", Preamble.statements(
        List.of("import com.sun.net.httpserver.HttpHandler;", "import dev.idem.server.IdempotencyGuard;"),
        List.of("HttpHandler ordersHandler;", "IdempotencyGuard guard;")));
    p.put("docs/server.md: Quickstart: transactional mode", Preamble.statements(
        List.of("import javax.sql.DataSource;"),
        List.of("DataSource dataSource;")));
    p.put("docs/server.md: Handlers with an effect elsewhere", Preamble.statements(
        List.of(),
        List.of("String pspUrl;", "String chargeJson;", "String operationId;")));
    p.put("docs/server.md: Answers shaped for your clients", Preamble.statements(
        List.of("import dev.idem.server.spi.IdempotencyStore;"),
        List.of("IdempotencyStore store;")));
    p.put("docs/server.md: The operator's view", Preamble.statements(
        List.of("import dev.idem.server.IdempotencyGuard;"),
        List.of("IdempotencyGuard guard;")));
    p.put("docs/server.md: The operator's view #2", Preamble.statements(
        List.of("import dev.idem.server.spi.IdempotencyStore;", "import io.micrometer.core.instrument.MeterRegistry;"),
        List.of("IdempotencyStore store;", "MeterRegistry registry;")));
    p.put("docs/webhooks.md: Quickstart: the JDK HttpServer", Preamble.statements(
        List.of("import dev.idem.webhooks.WebhookEvent;"),
        List.of("void fulfil(WebhookEvent event) { }")));
    p.put("docs/webhooks.md: Quickstart: a Servlet container", Preamble.statements(
        List.of("import dev.idem.webhooks.WebhookReceiver;", "import org.eclipse.jetty.ee10.servlet.ServletContextHandler;"),
        List.of("ServletContextHandler context;", "WebhookReceiver receiver;")));
    p.put("docs/webhooks.md: Dead letters", Preamble.statements(
        List.of("import dev.idem.webhooks.WebhookInbox;"),
        List.of("WebhookInbox inbox;")));
    p.put("docs/webhooks.md: Metrics (Micrometer, optional)", Preamble.statements(
        List.of("import dev.idem.webhooks.WebhookInbox;", "import dev.idem.webhooks.WebhookSource;",
            "import io.micrometer.core.instrument.MeterRegistry;"),
        List.of("WebhookInbox inbox;", "WebhookSource source;", "MeterRegistry registry;")));
    p.put("docs/webhooks.md: Metrics (Micrometer, optional) #2",
        p.get("docs/webhooks.md: Metrics (Micrometer, optional)"));
    return p;
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> all = new java.util.ArrayList<>(a);
    all.addAll(b);
    return List.copyOf(all);
  }
}
