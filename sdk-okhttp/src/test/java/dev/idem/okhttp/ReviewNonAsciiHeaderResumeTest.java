package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationException;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import okhttp3.Headers;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Review: OkHttp lets an app send a non-ASCII header value ({@code Headers.Builder.addUnsafeNonAscii},
 * e.g. a payer's name or a free-text reference a payments API takes in a header). The live attempt
 * sends it; the value is journaled as is. After a restart, the resume transport rebuilds the
 * request with {@code Request.Builder.addHeader}, which refuses non-ASCII values, so the journaled
 * operation can never be delivered with its key.
 */
class ReviewNonAsciiHeaderResumeTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  @Test
  void anOperationWithANonAsciiHeaderIsResumedAfterARestart() throws Exception {
    IdempotentExecutor dying = f.executorBuilder().sleeper(d -> {
      throw new InterruptedException("process is going down");
    }).build();
    IdempotentOperation op = IdempotentOperation.of("create-payment");
    server.plan().next(Fault.commitThenDropResponse());
    Request base = Fixture.order(server.url("/payments"), op);
    Request request = base.newBuilder()
        .headers(base.headers().newBuilder().addUnsafeNonAscii("X-Payer-Name", "José Müller").build())
        .build();
    assertThrows(OperationPendingException.class,
        () -> Fixture.client(IdemOkHttp.builder(dying).build()).newCall(request).execute());
    Thread.interrupted();
    assertEquals(OperationState.PENDING, f.record(op).state());
    assertEquals(1, server.requestCount(), "the live attempt went out with the header");

    f.time.advance(java.time.Duration.ofSeconds(1));
    IdemOkHttp idem = f.idem(); // the restarted process
    OkHttpClient client = Fixture.client(idem);
    List<Outcome> outcomes = new ArrayList<>();
    List<OperationException> failures = new ArrayList<>();
    ResumeSummary summary = idem.executor().resumePending(
        Map.of("create-payment", ResumeHandler.of(idem.transport(client), outcomes::add, failures::add)));

    assertEquals(1, summary.succeeded(), summary + " " + failures + " cause: "
        + (failures.isEmpty() ? null : String.valueOf(failures.get(0).getCause())) + "; attempts: " + f.record(op).attempts());
    assertEquals(2, server.requestCount());
    assertEquals(Optional.of(op.key().value()), server.recordedRequests().get(1).keyHeader());
    assertEquals(OperationState.SUCCEEDED, f.record(op).state());
  }

  /** Queued delivery (IdemOkHttp.enqueue): never sent, yet it ends UNCERTAIN. */
  @Test
  void aQueuedOperationWithANonAsciiHeaderIsDelivered() throws Exception {
    IdemOkHttp idem = f.idem();
    Request base = Fixture.order(server.url("/payments"), IdempotentOperation.of("create-payment"));
    Request request = base.newBuilder()
        .headers(base.headers().newBuilder().addUnsafeNonAscii("X-Payer-Name", "José Müller").build())
        .build();
    dev.idem.core.OperationId id = idem.enqueue(request);

    List<OperationException> failures = new ArrayList<>();
    ResumeSummary summary = idem.executor().resumePending(Map.of("create-payment",
        ResumeHandler.of(idem.transport(Fixture.client(idem)), o -> { }, failures::add)));

    assertEquals(1, server.requestCount(), summary + " " + failures);
    assertEquals(OperationState.SUCCEEDED, f.journal.find(id).orElseThrow().state(),
        "nothing was ever sent, so the journal must not say the effect may exist");
  }
}
