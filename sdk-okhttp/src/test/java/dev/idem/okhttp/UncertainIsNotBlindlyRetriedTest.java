package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.client;
import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The exception decision of issue 14: Idem's exceptions stay checked IOExceptions, so a generic
 * {@code catch (IOException)} retry wrapper around an Idem call does catch an UNCERTAIN outcome.
 * What makes that safe is the key: a wrapper that resubmits the same operation (the same tag, or a
 * new tag for the same business reference) re-uses the key, so the journal answers UNCERTAIN again
 * without sending, or, after a restart with an empty journal, the server answers with its replay.
 * Only a wrapper that makes a new operation with a new random key can duplicate, and the test
 * shows that too, as the case the docs warn about.
 */
class UncertainIsNotBlindlyRetriedTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;
  final List<IOException> caught = new ArrayList<>();

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  /** The kind of wrapper apps already have: any IOException, try again, up to three times. */
  private String retryOnIoException(OkHttpClient client, Supplier<IdempotentOperation> operation) {
    for (int i = 0; i < 3; i++) {
      try (Response r = client.newCall(order(server.url("/orders"), operation.get())).execute()) {
        return r.code() + "";
      } catch (IOException e) {
        caught.add(e);
      }
    }
    return "gave up";
  }

  private OkHttpClient clientGivingUpAfterOneAmbiguousAttempt(InMemoryJournal journal) {
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).clock(f.time.clock())
        .sleeper(f.time.sleeper()).referenceKeySecret(ReferenceKeyTest.SECRET)
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    return client(IdemOkHttp.builder(executor).build());
  }

  @Test
  void resubmittingTheSameReferenceAfterUncertainSendsNothingMore() {
    server.plan().next(Fault.commitThenDropResponse());
    OkHttpClient client = clientGivingUpAfterOneAmbiguousAttempt(f.journal);

    String result = retryOnIoException(client, () -> IdempotentOperation.forReference("create-order", "cart-42"));

    assertEquals("gave up", result);
    assertEquals(3, caught.size());
    caught.forEach(e -> assertInstanceOf(OperationUncertainException.class, e));
    OperationUncertainException first = (OperationUncertainException) caught.get(0);
    caught.forEach(e -> assertEquals(first.operationId(), ((OperationUncertainException) e).operationId(),
        "every retry is the same operation"));
    assertEquals(1, server.requestCount(), "the wrapper's retries sent nothing: the journal says UNCERTAIN");
    assertEquals(1, server.totalEffects());
  }

  @Test
  void resubmittingTheSameTagAfterUncertainSendsNothingMore() {
    server.plan().next(Fault.commitThenDropResponse());
    OkHttpClient client = clientGivingUpAfterOneAmbiguousAttempt(f.journal);
    IdempotentOperation tag = IdempotentOperation.of("create-order");

    retryOnIoException(client, () -> tag);

    assertEquals(1, server.requestCount());
    assertEquals(1, server.totalEffects());
  }

  @Test
  void afterARestartTheSameReferenceIsAnsweredByTheServersReplay() throws Exception {
    server.plan().next(Fault.commitThenDropResponse());
    String first = retryOnIoException(clientGivingUpAfterOneAmbiguousAttempt(f.journal),
        () -> IdempotentOperation.forReference("create-order", "cart-42"));
    assertEquals("gave up", first);

    String afterRestart = retryOnIoException(clientGivingUpAfterOneAmbiguousAttempt(new InMemoryJournal()),
        () -> IdempotentOperation.forReference("create-order", "cart-42"));

    assertEquals("201", afterRestart);
    assertEquals(1, server.totalEffects(), "the lost response's effect, and no second one");
    String key = ((OperationUncertainException) caught.get(0)).key().value();
    Fixture.assertKeyOnEveryRequest(server, key, 2);
  }

  @Test
  void aWrapperThatMakesANewRandomKeyPerTryIsTheDuplicateTheDocsWarnAbout() {
    server.plan().next(Fault.commitThenDropResponse()).next(Fault.commitThenDropResponse());
    OkHttpClient client = clientGivingUpAfterOneAmbiguousAttempt(f.journal);

    String result = retryOnIoException(client, () -> IdempotentOperation.of("create-order"));

    assertEquals("201", result);
    assertEquals(3, server.totalEffects(), "three keys, three effects: why forReference exists");
    assertTrue(caught.stream().allMatch(e -> e instanceof OperationUncertainException));
  }
}
