package dev.idem.httpclient.contract;

import dev.idem.core.OperationId;
import dev.idem.core.spi.Transport;
import dev.idem.httpclient.IdempotentHttpClient;
import dev.idem.httpclient.IdempotentHttpResponse;
import dev.idem.httpclient.OperationCall;
import dev.idem.testkit.contract.AdapterContract;
import dev.idem.testkit.contract.AdapterDriver;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.Optional;

/** The java.net.http adapter, called with {@code send} or {@code sendAsync}. */
final class JdkDriver implements AdapterDriver {
  /**
   * One JDK client for every test: its connection pool is harmless across ports. It follows
   * redirects, as many apps' clients do, so the contract shows that keyed calls do not.
   */
  static final HttpClient JDK = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .followRedirects(HttpClient.Redirect.NORMAL).connectTimeout(Duration.ofSeconds(5)).build();

  private final boolean async;

  JdkDriver(boolean async) {
    this.async = async;
  }

  @Override
  public Session open(Setup setup) {
    IdempotentHttpClient client = IdempotentHttpClient.builder(JDK).idempotentExecutor(setup.executor())
        .keyHeader(setup.keyHeader()).keyFormat(setup.format()).untaggedPolicy(setup.untagged()).build();
    return new Session() {
      @Override
      public Reply send(Call call) throws Exception {
        HttpRequest request = request(call);
        HttpResponse<String> r;
        if (call.operation() == null) {
          r = async ? AdapterContract.await(setup.time(), client.sendAsync(request, BodyHandlers.ofString()))
              : client.send(request, BodyHandlers.ofString());
        } else {
          OperationCall op = operation(client, call);
          r = async ? AdapterContract.await(setup.time(), op.sendAsync(request, BodyHandlers.ofString()))
              : op.send(request, BodyHandlers.ofString());
        }
        if (r instanceof IdempotentHttpResponse<String> keyed) {
          return new Reply(r.statusCode(), r.body(), Optional.of(keyed.operationId()), Optional.of(keyed.state()),
              keyed.replayed(), r.headers().map());
        }
        return new Reply(r.statusCode(), r.body(), Optional.empty(), Optional.empty(), false, r.headers().map());
      }

      @Override
      public OperationId enqueue(Call call) throws Exception {
        return operation(client, call).enqueue(request(call));
      }

      @Override
      public Transport resumeTransport() {
        return client.resumeTransport();
      }
    };
  }

  private static OperationCall operation(IdempotentHttpClient client, Call call) {
    OperationCall op = client.operation(call.operation());
    return call.key() == null ? op : op.key(call.key());
  }

  private static HttpRequest request(Call call) {
    HttpRequest.Builder b = HttpRequest.newBuilder(call.url()).timeout(Duration.ofSeconds(5))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(call.json()));
    call.headers().forEach(b::header);
    return b.build();
  }
}
