package dev.idem.core;

import static dev.idem.core.SecretRuleCalls.refusedNothingSentOrJournaled;
import static dev.idem.core.SecretRuleCalls.storedLocation;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Harness;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review: a {@code ;}-separated piece is meant to be "judged as a parameter of its own", but its
 * value is never read as a URL (semicolonPairs: "the pair's whole value already was"). When the
 * pair's own value does not begin like a URL ({@code page=1;next=https://...}) it was not read
 * either, so a nested URL carrying a token or user info after a {@code ;} is sent and journaled in
 * clear, while the same parameter after {@code &} is refused. To a server that splits on {@code ;}
 * (the case the commit is about) it is {@code next=https://idp/cb?access_token=...}.
 */
class SecretRuleSemicolonSeparatedNestedUrlTest {

  @ParameterizedTest
  @ValueSource(strings = {
      "https://api.example.test/v1/login?page=1;next=https://idp.example.test/cb?access_token=planted",
      "https://api.example.test/v1/login?page=1;next=https://svc:planted@idp.example.test/cb",
      "https://api.example.test/v1/login?page=1;next=%2Fcb%3Faccess_token%3Dplanted",
  })
  void aNestedUrlCarryingACredentialAfterASemicolonIsRefused(String uri) throws Exception {
    // 76dd94ee: nothing thrown, the request is sent and journaled with the token in clear
    IllegalArgumentException e = refusedNothingSentOrJournaled(new Harness(), "login", uri);

    assertTrue(e.getMessage().contains("'next'"), e.getMessage());
    assertFalse(e.getMessage().contains("planted"), e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "https://app.example.test/f?page=1;next=https://idp.example.test/cb?access_token=planted",
      "https://app.example.test/f?page=1;next=https://svc:planted@idp.example.test/cb",
  })
  void aStoredLocationHasASemicolonSeparatedNestedCredentialRedacted(String location) throws Exception {
    List<String> stored = storedLocation(new Harness(), "create", location);
    // 76dd94ee stores the Location unchanged, token / password in clear
    assertFalse(stored.get(0).contains("planted"), stored.toString());
  }
}
