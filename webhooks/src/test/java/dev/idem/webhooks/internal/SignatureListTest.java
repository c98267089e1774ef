package dev.idem.webhooks.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How a GenericHmac signature header is cut into signatures, prefix by prefix. */
class SignatureListTest {
  @Test
  void aPrefixHoldingACommaIsFoundWhole() {
    assertEquals(List.of("AAA=", "BBB="), GenericHmacVerifier.signatures("v1,AAA= v1,BBB=", "v1,"));
    // another version (Standard Webhooks' asymmetric v1a) is not ours
    assertEquals(List.of("BBB="), GenericHmacVerifier.signatures("v1a,AAA= v1,BBB=", "v1,"));
    assertEquals(List.of("AAA=", "BBB="), GenericHmacVerifier.signatures("v1,AAA=,v1,BBB=", "v1,"));
  }

  @Test
  void piecesSeparatedBySpacesOrCommasAsBefore() {
    assertEquals(List.of("ab", "cd"), GenericHmacVerifier.signatures("t=1,v1=ab,v0=ef,v1=cd", "v1="));
    assertEquals(List.of("ab", "cd"), GenericHmacVerifier.signatures("sha256=ab sha256=cd", "sha256="));
    assertEquals(List.of("ab", "cd", "ef"), GenericHmacVerifier.signatures("ab,cd  ef,", ""));
    assertEquals(List.of(), GenericHmacVerifier.signatures("sha256=", "sha256="));
    assertEquals(List.of(), GenericHmacVerifier.signatures("md5=ab", "sha256="));
  }
}
