package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.springframework.test.web.client.response.MockRestResponseCreators.withSuccess;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.http.UntaggedPolicy;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.test.web.client.MockRestServiceServer;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.client.RestClient;

/**
 * Under the starter's default {@code untagged-policy=fresh-key}, an app's own OAuth token call
 * through RestClient (a form body with {@code client_secret=}) goes out once, unjournaled and
 * without a key, as under pass-through: the executor refuses to journal a credential in a form
 * body, and an untagged call the app never marked must not be refused for it. An untagged form
 * body without a credential is keyed and journaled as before.
 */
class RestClientFormCredentialTest {
  private static final String SECRET = "planted-client-secret-restclient";
  private final InMemoryJournal journal = new InMemoryJournal();
  private final IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();

  @AfterEach
  void stop() {
    executor.close();
  }

  private RestClient.Builder freshKey() {
    return RestClient.builder().requestInterceptor(
        IdempotencyInterceptor.builder(executor).untaggedPolicy(UntaggedPolicy.FRESH_KEY).build());
  }

  private List<OperationRecord> all() throws Exception {
    List<OperationRecord> all = new ArrayList<>();
    for (OperationState s : OperationState.values()) {
      all.addAll(journal.findByState(s, null, 100));
    }
    return all;
  }

  private static MultiValueMap<String, String> form(String... pairs) {
    MultiValueMap<String, String> m = new LinkedMultiValueMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      m.add(pairs[i], pairs[i + 1]);
    }
    return m;
  }

  @Test
  void anUntaggedTokenCallGoesOutOnceUnjournaled() throws Exception {
    RestClient.Builder builder = freshKey();
    MockRestServiceServer server = MockRestServiceServer.bindTo(builder).build();
    List<String> bodies = new ArrayList<>();
    server.expect(request -> assertEquals(URI.create("http://auth.example/oauth/token"), request.getURI()))
        .andExpect(request -> {
      assertNull(request.getHeaders().getFirst("Idempotency-Key"), "sent as a pass-through call: no key");
      bodies.add(((MockClientHttpRequest) request).getBodyAsString());
    }).andRespond(withSuccess("{\"access_token\":\"t\"}", MediaType.APPLICATION_JSON));

    String answer = builder.build().post().uri("http://auth.example/oauth/token")
        .contentType(MediaType.APPLICATION_FORM_URLENCODED)
        .body(form("grant_type", "client_credentials", "client_secret", SECRET)).retrieve().body(String.class);

    assertEquals("{\"access_token\":\"t\"}", answer);
    server.verify();
    assertEquals(List.of("grant_type=client_credentials&client_secret=" + SECRET), bodies, "sent once, whole");
    assertEquals(List.of(), all(), "nothing journaled");
  }

  @Test
  void anUntaggedFormWithoutACredentialIsKeyedAndJournaled() throws Exception {
    RestClient.Builder builder = freshKey();
    MockRestServiceServer server = MockRestServiceServer.bindTo(builder).build();
    server.expect(request -> assertEquals(URI.create("http://api.example/orders"), request.getURI()))
        .andRespond(withSuccess("created", MediaType.TEXT_PLAIN));

    builder.build().post().uri("http://api.example/orders").contentType(MediaType.APPLICATION_FORM_URLENCODED)
        .body(form("item", "book")).retrieve().toBodilessEntity();

    server.verify();
    List<OperationRecord> records = all();
    assertEquals(1, records.size());
    assertEquals("untagged-post", records.get(0).id().operation());
  }
}
