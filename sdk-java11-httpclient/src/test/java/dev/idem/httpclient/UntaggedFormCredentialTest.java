package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.ReceivedRequest;
import java.io.ByteArrayInputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An untagged POST the fresh-key policy keys was keyed before its body was read, so a credential
 * in its form body ({@code client_secret=}, an app's own OAuth token call) went to the journal in
 * clear. Such a call now goes out once through the app's client, unjournaled and without a key,
 * as the OkHttp adapter and the starter's RestClient send it; a form without a credential is
 * keyed and journaled as before.
 */
class UntaggedFormCredentialTest {
  private static final String SECRET = "planted-client-secret-jdk";
  private static final String FORM = "grant_type=client_credentials&client_id=orders&client_secret=" + SECRET;

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  IdempotentServer server;
  Fixture f;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
    f = new Fixture(b -> { }, c -> c.untaggedPolicy(UntaggedPolicy.FRESH_KEY));
  }

  private List<OperationRecord> allRecords() throws Exception {
    List<OperationRecord> all = new ArrayList<>();
    for (OperationState s : OperationState.values()) {
      all.addAll(f.journal.findByState(s, null, 100));
    }
    return all;
  }

  private HttpRequest form(String path, String body) {
    // A one-shot stream: the call must send the bytes the capture read, not subscribe again.
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return HttpRequest.newBuilder(server.url(path))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofInputStream(new java.util.function.Supplier<>() {
          private boolean taken;

          @Override
          public synchronized java.io.InputStream get() {
            if (taken) {
              throw new IllegalStateException("the body was read twice");
            }
            taken = true;
            return new ByteArrayInputStream(bytes);
          }
        }))
        .build();
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void anUntaggedFormWithACredentialGoesOutOnceUnjournaled(Mode mode) throws Exception {
    HttpResponse<String> r = mode.plain(f, form("/oauth/token", FORM), HttpResponse.BodyHandlers.ofString());
    assertEquals(List.of(), allRecords(), "nothing journaled, so no byte of the secret");
    List<ReceivedRequest> received = server.recordedRequests();
    assertEquals(1, received.size(), "sent once");
    assertEquals(Optional.empty(), received.get(0).keyHeader(), "sent as a pass-through call: no key");
    assertEquals(FORM, received.get(0).body(), "the body the app wrote, whole");
    assertFalse(r instanceof IdempotentHttpResponse, "the wrapped client's own response: not an operation");
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void anUntaggedFormWithoutACredentialIsKeyedAndJournaled(Mode mode) throws Exception {
    HttpResponse<String> r = mode.plain(f, form("/orders", "item=book&qty=1"), HttpResponse.BodyHandlers.ofString());
    assertEquals(201, r.statusCode());
    List<OperationRecord> records = allRecords();
    assertEquals(1, records.size());
    assertEquals("untagged-post", records.get(0).id().operation());
    assertEquals("item=book&qty=1", new String(records.get(0).request().body(), StandardCharsets.UTF_8));
    assertEquals(1, server.recordedRequests().size());
    assertEquals(Optional.of(records.get(0).id().key().value()), server.recordedRequests().get(0).keyHeader());
  }
}
