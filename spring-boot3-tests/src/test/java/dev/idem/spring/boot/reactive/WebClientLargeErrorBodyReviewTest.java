package dev.idem.spring.boot.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.client.IdempotentCall;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Flux;

/**
 * A keyed WebClient POST answered 400 Bad Request (a permanent refusal) whose body is over 1 MiB
 * (a validation report, an HTML error page from a gateway): docs/spring.md says a call ends in "the
 * server's response ... for FAILED when the server answered (a permanent 4xx), handled by the status
 * handlers as usual", and the RestClient interceptor does exactly that (it reads a 64 KiB prefix
 * and hands the rest over live). The WebClient filter instead reads an error body whole, up to
 * 1 MiB (ReactiveAttempts.MAX_BUFFERED), and past that fails the attempt as an I/O error: the 400
 * is taken for an ambiguous attempt, sent again with the same key until the attempts run out, and
 * the operation ends UNCERTAIN; the app gets an OperationUncertainException instead of its 400, and
 * an operator is asked to reconcile an operation the server plainly refused.
 *
 * <p>Expected: one exchange, the 400 reaches retrieve()'s status handling
 * (WebClientResponseException.BadRequest), and the journal says FAILED.
 */
class WebClientLargeErrorBodyReviewTest {
  private static final int BODY = 2 * 1024 * 1024;

  @Test
  void aPermanent400WithABodyOverOneMebibyteIsHandedOverNotRetriedAsUncertain(@TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false")
        .withBean(WebClient.Builder.class, WebClient::builder)
        .run(context -> {
          AtomicInteger exchanges = new AtomicInteger();
          WebClient client = context.getBean(WebClient.Builder.class)
              .exchangeFunction(request -> {
                exchanges.incrementAndGet();
                return reactor.core.publisher.Mono.just(ClientResponse.create(HttpStatus.BAD_REQUEST)
                    .header("Content-Type", "text/plain")
                    .body(errorBody())
                    .build());
              })
              .build();
          IdempotentCall call = IdempotentCall.named("create-order");
          Throwable error = client.post().uri("http://api.example/orders").contentType(MediaType.APPLICATION_JSON)
              .attributes(call).bodyValue("{\"qty\":1}").retrieve().bodyToMono(String.class)
              .map(Object.class::cast).onErrorResume(e -> reactor.core.publisher.Mono.just(e))
              .block(Duration.ofSeconds(60)) instanceof Throwable t ? t : null;

          IdempotentExecutor executor = context.getBean(IdempotentExecutor.class);
          List<OperationRecord> uncertain = executor.journal().findByState(OperationState.UNCERTAIN, null, 10);
          assertEquals(List.of(), uncertain.stream().map(r -> r.id() + " " + r.attempts()).toList(),
              "a 400 the server answered is journaled UNCERTAIN (the app got " + error + ")");
          assertEquals(1, exchanges.get(), "the 400 was sent again with the same key, as if no answer had come");
          assertInstanceOf(WebClientResponseException.BadRequest.class, error,
              "the 400 did not reach retrieve()'s status handling");
          assertEquals(1, executor.journal().findByState(OperationState.FAILED, null, 10).size(),
              "the refused operation is not journaled FAILED");
        });
  }

  /** The caller reads all of a long error body: the prefix Idem read, then the rest, live. */
  @Test
  void theWholeLongErrorBodyReachesTheCaller(@TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false")
        .withBean(WebClient.Builder.class, WebClient::builder)
        .run(context -> {
          WebClient client = context.getBean(WebClient.Builder.class)
              .exchangeFunction(request -> reactor.core.publisher.Mono.just(ClientResponse.create(HttpStatus.BAD_REQUEST)
                  .header("Content-Type", "text/plain").body(errorBody()).build()))
              .build();
          Long read = client.post().uri("http://api.example/orders").contentType(MediaType.APPLICATION_JSON)
              .attributes(IdempotentCall.named("create-order")).bodyValue("{\"qty\":1}")
              .exchangeToMono(r -> r.bodyToFlux(DataBuffer.class).map(b -> {
                long n = b.readableByteCount();
                org.springframework.core.io.buffer.DataBufferUtils.release(b);
                return n;
              }).reduce(0L, Long::sum))
              .block(Duration.ofSeconds(60));
          assertEquals(BODY, read);
        });
  }

  private static Flux<DataBuffer> errorBody() {
    byte[] chunk = new byte[64 * 1024];
    Arrays.fill(chunk, (byte) 'x');
    return Flux.range(0, BODY / chunk.length).map(i -> DefaultDataBufferFactory.sharedInstance.wrap(chunk.clone()));
  }
}
