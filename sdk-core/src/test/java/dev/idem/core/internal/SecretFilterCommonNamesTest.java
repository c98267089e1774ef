package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.RequestSnapshot;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link SecretFilter#isSecretHeader} answers the common header names from a table made by the
 * default rule: the table must give the rule's answer for every one, and an app's own secret
 * names and the always-secret names must still win over it.
 */
class SecretFilterCommonNamesTest {
  @Test
  void everyCommonNameGetsTheDefaultRulesAnswerInAnyCase() {
    SecretFilter filter = new SecretFilter(Set.of(), Set.of(), Set.of());
    for (String name : HeaderMaps.commonLowerCaseNames()) {
      boolean rule = RequestSnapshot.isSecretByDefault(name);
      assertEquals(rule, filter.isSecretHeader(name), name);
      assertEquals(rule, filter.isSecretHeader(name.toUpperCase(java.util.Locale.ROOT)), name);
    }
  }

  @Test
  void setCookieInTheTableIsStillSecretEvenWhenAllowed() {
    SecretFilter allowing = new SecretFilter(Set.of(), Set.of("Set-Cookie"), Set.of());
    assertTrue(allowing.isSecretHeader("Set-Cookie"));
    assertTrue(allowing.isSecretHeader("set-cookie"));
  }

  @Test
  void anAppsOwnSecretNameWinsOverTheTable() {
    SecretFilter filter = new SecretFilter(Set.of("Request-Id", "X-Request-Id"), Set.of(), Set.of());
    assertTrue(filter.isSecretHeader("Request-Id"));
    assertTrue(filter.isSecretHeader("x-request-id"));
    assertFalse(filter.isSecretHeader("Date"));
    assertFalse(filter.isSecretHeader("Idempotency-Key"));
  }
}
