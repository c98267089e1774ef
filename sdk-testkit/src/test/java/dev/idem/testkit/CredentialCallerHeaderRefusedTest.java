package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The caller is kept in clear in every stored answer, as a real guard keeps it: a caller header
 * that holds a credential ({@code Authorization}, {@code Cookie}, {@code X-Api-Key}) is refused by
 * the same rule the Spring starter refuses {@code idem.server.caller-header} by
 * ({@code RequestSnapshot.isSecretByDefault}). The test server took any name.
 */
class CredentialCallerHeaderRefusedTest {
  @ParameterizedTest
  @ValueSource(strings = {"Authorization", "cookie", "X-Api-Key", "Proxy-Authorization", "X-Auth-Token"})
  void aCredentialHeaderIsRefusedAsTheCallerHeader(String name) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> IdempotentServer.builder().callerHeader(name));
    assertTrue(e.getMessage().contains(name) && e.getMessage().contains("credential"), e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(strings = {"X-Caller", "X-Tenant-Id", "X-Account"})
  void anAccountHeaderIsAccepted(String name) {
    assertDoesNotThrow(() -> IdempotentServer.builder().callerHeader(name));
  }
}
