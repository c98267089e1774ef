package dev.idem.examples.badinput;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.testkit.IdempotentServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15: every bad input gets a clear IllegalArgumentException at execute, executeAsync and
 * enqueue, and nothing is journaled (an embedded SQLite journal, counted in every state) or sent
 * (the reference server counts requests). Before, a CR/LF header value was journaled by enqueue and
 * then failed every resume, and an unpaired surrogate in a name was stored as '?', so that after a
 * restart find no longer found the operation and begin made a second one.
 */
class BadInputTableTest {
  /** One row: what is wrong, how to build it against the server's URL, what the message must say. */
  record Case(String what, Function<String, Operation> build, String answer) {
    @Override
    public String toString() {
      return what;
    }
  }

  static RequestSnapshot.Builder post(String base) {
    return RequestSnapshot.builder("POST", URI.create(base + "/orders"))
        .body("{\"amount\":1}".getBytes(StandardCharsets.UTF_8), "application/json");
  }

  static Case header(String what, String name, String value, String answer) {
    return new Case(what, base -> Operation.builder("create-order", post(base).header(name, value).build()).build(),
        answer);
  }

  static Case op(String what, String name, String scope, String reference, String answer) {
    return new Case(what, base -> {
      Operation.Builder b = Operation.builder(name, post(base).build()).scope(scope);
      return (reference == null ? b : b.reference(reference)).build();
    }, answer);
  }

  static Case query(String what, String query, String answer) {
    return new Case(what, base -> Operation.builder("create-order",
        RequestSnapshot.builder("POST", URI.create(base + "/orders?" + query)).build()).build(), answer);
  }

  static final List<Case> CASES = List.of(
      header("CR/LF in a header value (header injection)", "X-Note", "a\r\nX-Injected: 1", "control character"),
      header("LF alone in a header value", "X-Note", "a\nb", "CR/LF"),
      header("CR alone in a header value", "X-Note", "a\rb", "CR/LF"),
      header("NUL in a header value", "X-Note", "a\u0000b", "control character"),
      header("BEL in a header value", "X-Note", "a\u0007b", "control character"),
      header("DEL in a header value", "X-Note", "a\u007fb", "control character"),
      header("unpaired surrogate in a header value", "X-Note", "a\ud800b", "cannot be sent"),
      header("space in a header name", "X Note", "v", "invalid character"),
      header("colon in a header name", "X-Note:", "v", "invalid character"),
      header("CR/LF in a header name", "X-Note\r\nX-Injected", "v", "invalid character"),
      header("non-ASCII header name", "X-Nöte", "v", "invalid character"),
      header("empty header name", "", "v", "empty"),
      header("header name with a slash", "X/Note", "v", "invalid character"),
      op("unpaired high surrogate in the operation name", "create-\ud800order", "default", null,
          "unpaired surrogate"),
      op("unpaired low surrogate in the operation name", "\udc00", "default", null, "unpaired surrogate"),
      op("reversed surrogate pair in the operation name", "x\udc00\ud800", "default", null, "unpaired surrogate"),
      op("newline in the operation name", "create\norder", "default", null, "control character"),
      op("NUL in the operation name", "create\u0000order", "default", null, "control character"),
      op("C1 control in the operation name", "create\u0085order", "default", null, "control character"),
      op("unpaired surrogate in the scope", "create-order", "tenant-\ud83d", null, "unpaired surrogate"),
      op("tab in the scope", "create-order", "tenant\t42", null, "control character"),
      op("unpaired surrogate in the reference", "create-order", "default", "cart-\ude00", "unpaired surrogate"),
      op("CR/LF in the reference", "create-order", "default", "cart\r\n42", "control character"),
      op("ESC in the reference", "create-order", "default", "cart\u001b[31m", "control character"),
      query("api_key in the query string", "currency=EUR&api_key=k", "'api_key'"),
      query("access_token in the query string", "access_token=t", "'access_token'"),
      query("password in the query string", "user=a&password=p", "'password'"),
      query("percent-encoded secret name in the query", "api%5Fkey=k", "'api_key'"),
      query("signature in the query string (a presigned URL)", "X-Amz-Signature=abc", "'X-Amz-Signature'"));

  @Test
  void everyBadInputIsRefusedAtEveryEntryWithNothingJournaledOrSent(@TempDir Path dir) throws Exception {
    try (IdempotentServer server = IdempotentServer.start();
        JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      String base = server.url("/").toString().replaceAll("/$", "");
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient client = new OkHttpClient.Builder().retryOnConnectionFailure(false).build();
      List<String> wrong = new ArrayList<>();
      int tried = 0;
      for (Case c : CASES) {
        Operation op = c.build().apply(base);
        List<Throwable> answers = new ArrayList<>();
        answers.add(refusal(() -> executor.execute(op, idem.transport(client))));
        answers.add(refusal(() -> executor.executeAsync(op, idem.asyncTransport(client)).join()));
        answers.add(refusal(() -> executor.enqueue(op)));
        for (Throwable t : answers) {
          tried++;
          if (!(t instanceof IllegalArgumentException) || !t.getMessage().contains(c.answer())) {
            wrong.add(c + ": " + t);
          }
        }
      }
      assertEquals(List.of(), wrong);
      assertEquals(CASES.size() * 3, tried);
      assertEquals(29, CASES.size());
      assertEquals(0, server.requestCount(), "nothing may be sent");
      for (OperationState s : OperationState.values()) {
        assertEquals(0, journal.count(s), "nothing may be journaled, yet " + s + " has records");
      }
    }
  }

  private interface Call {
    Object run() throws Exception;
  }

  private static Throwable refusal(Call call) {
    try {
      return new AssertionError("accepted: " + call.run());
    } catch (CompletionException e) {
      return e.getCause();
    } catch (Throwable t) {
      return t;
    }
  }

  // The other half of the surrogate case: a name or reference outside the BMP, correctly paired, is
  // valid, stored exactly, and found again after a restart; begin then does not make a second one.
  @Test
  void aPairedSurrogateSurvivesARestartAndIsFoundAgain(@TempDir Path dir) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      String base = server.url("/").toString().replaceAll("/$", "");
      OkHttpClient client = new OkHttpClient.Builder().retryOnConnectionFailure(false).build();
      Operation op = Operation.builder("create-\ud83d\ude00-order", post(base).build()).scope("tenant-\ud835\udc00")
          .reference("cart-\ud83d\ude00").build();
      try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
        IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
        executor.enqueue(op);
      }
      try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
        IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
        List<OperationRecord> found = executor.findByReference("tenant-\ud835\udc00", "cart-\ud83d\ude00");
        assertEquals(1, found.size());
        assertEquals(op.id(), found.get(0).id());
        assertTrue(executor.find(op.id()).isPresent());
        Outcome out = executor.execute(op, IdemOkHttp.builder(executor).build().transport(client));
        assertEquals(201, out.response().status());
        assertEquals(1, journal.count(OperationState.SUCCEEDED));
        assertEquals(1, server.effectCount(op.key().value()));
      }
    }
  }
}
