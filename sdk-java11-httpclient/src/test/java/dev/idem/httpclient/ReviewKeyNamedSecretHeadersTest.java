package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.OperationId;
import dev.idem.core.spi.RequestSnapshot;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review (jdkhttp): credential headers whose names end in {@code -key} without one of the default
 * fragments (api-key, apikey, token, secret, password, session, signature, auth, credential) are
 * journaled in clear. Azure API Management's {@code Ocp-Apim-Subscription-Key}, Azure Functions'
 * {@code x-functions-key} and Datadog's {@code DD-APPLICATION-KEY} are each the whole credential of
 * their API, and a java.net.http caller who sets them as headers (as those APIs require) finds
 * them in the journal file, the CLI's {@code show}, and every backup, for as long as the journal
 * keeps the operation. The rule is documented as "wide on purpose: ... a false negative leaves a
 * credential readable in a file"; the query rule already treats a bare {@code key} as a secret,
 * the header rule does not.
 */
class ReviewKeyNamedSecretHeadersTest {
  @ParameterizedTest
  @ValueSource(strings = {"Ocp-Apim-Subscription-Key", "x-functions-key", "DD-APPLICATION-KEY", "X-Master-Key"})
  void aKeyNamedCredentialHeaderIsNotJournaled(String header) throws Exception {
    Fixture f = new Fixture();
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/orders"))
        .header("Content-Type", "application/json")
        .header("X-Api-Key", "control-value")
        .header(header, "0123456789abcdef0123456789abcdef")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A-1\"}")).build();
    OperationId id = f.client.operation("create-order").enqueue(request);

    RequestSnapshot journaled = f.record(id).request();
    Map<String, List<String>> lower = journaled.headers().entrySet().stream()
        .collect(Collectors.toMap(e -> e.getKey().toLowerCase(Locale.ROOT), Map.Entry::getValue));
    assertFalse(lower.containsKey("x-api-key"), "control: X-Api-Key is kept out");
    assertEquals(null, lower.get(header.toLowerCase(Locale.ROOT)),
        header + " (a credential) was journaled in clear");
  }
}
