package dev.idem.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class SecretQueryParametersTest {
  @Test
  void aQueryWithoutCredentialsIsTheSameString() {
    String q = "page=2&sort=asc";
    assertSame(q, SecretQueryParameters.removedFrom(q));
    assertNull(SecretQueryParameters.removedFrom(null));
    assertEquals("", SecretQueryParameters.removedFrom(""));
  }

  @Test
  void credentialsAreRemovedWhereverTheyStand() {
    assertNull(SecretQueryParameters.removedFrom("access_token=t"));
    assertEquals("page=2", SecretQueryParameters.removedFrom("access_token=t&page=2"));
    assertEquals("page=2", SecretQueryParameters.removedFrom("page=2&access_token=t"));
    assertEquals("page=2&sort=asc", SecretQueryParameters.removedFrom("page=2&API_KEY=k&sort=asc&sig=s"));
    assertEquals("page=2", SecretQueryParameters.removedFrom("page=2&%61ccess_token=t"), "a percent-encoded name");
    assertNull(SecretQueryParameters.removedFrom("access_token"), "a name without a value");
  }
}
