package dev.idem.core;

import static dev.idem.core.SecretRuleCalls.sentOnceAndJournaledAsGiven;
import static dev.idem.core.SecretRuleCalls.storedLocation;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.support.Harness;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review (regression since 9f67e2dd): a {@code ;} that belongs to a URL nested raw in a query value
 * (a matrix parameter {@code /books;author=tolkien}, a return URL's {@code ?lang=en;session_id=...})
 * is judged by the wide top-level substring rule ({@code author} contains {@code auth}, {@code session_id}
 * contains {@code session}), although the nested walk already read that URL and found it clean by
 * the nested rule's exact names. docs/client.md promises that a return URL's {@code ?author=},
 * {@code ?session=2} and Stripe's {@code ?session_id=} are kept, and that {@code /books;author=tolkien}
 * is no credential; the ';' commit itself says pieces inside a nested URL are judged by exact
 * nested names. Spring's UriComponentsBuilder leaves ';' raw in a query value, so an ordinary app
 * building {@code ?next=/books;author=tolkien} now has its call refused, and a stored Location
 * loses its non-secret {@code tolkien}.
 */
class SecretRuleSemicolonInNestedUrlTest {

  @ParameterizedTest
  @ValueSource(strings = {
      "https://api.example.test/v1/login?next=/books;author=tolkien",
      "https://api.example.test/v1/login?return_to=/books;author=tolkien;year=1954&page=2",
      "https://api.example.test/v1/checkout?success_url=https://shop.example.test/done?lang=en;session_id=cs_test_1",
      "https://api.example.test/v1/login?next=https://app.example.test/cart?lang=fr;session=2",
  })
  void aCleanNestedUrlWithASemicolonIsSentAndJournaledAsGivenAsBefore(String uri) throws Exception {
    // 76dd94ee: IllegalArgumentException "query parameter 'author' looks like a credential"
    sentOnceAndJournaledAsGiven(new Harness(), "login", uri);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "https://app.example.test/orders/1?next=/books;author=tolkien",
      "https://app.example.test/orders/1?success_url=https://shop.example.test/done?lang=en;session_id=cs_test_1",
  })
  void aStoredLocationWithACleanNestedUrlKeepsItsMatrixAndReturnParameters(String location) throws Exception {
    // 76dd94ee stores ...;author=redacted / ...;session_id=redacted
    assertEquals(List.of(location), storedLocation(new Harness(), "create", location));
  }
}
