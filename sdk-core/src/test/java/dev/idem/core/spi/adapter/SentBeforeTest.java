package dev.idem.core.spi.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.Classifier;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;

class SentBeforeTest {
  @Test
  void theDefaultTablesNotSentTypesAreTold() {
    assertTrue(SentBefore.typedNotSent(new ConnectException("refused")));
    assertTrue(SentBefore.typedNotSent(new IOException("wrapped", new UnknownHostException("h"))));
    assertTrue(SentBefore.typedNotSent(new SocketTimeoutException("connect timed out")));
    assertTrue(SentBefore.typedNotSent(new javax.net.ssl.SSLHandshakeException("certificate_required")));
    assertFalse(SentBefore.typedNotSent(new SocketTimeoutException("Read timed out")));
    assertFalse(SentBefore.typedNotSent(new IOException("unexpected end of stream")));
  }

  /** Hidden, the failure is ambiguous to the table, and kept (suppressed) for whoever reads it. */
  @Test
  void aHiddenFailureIsAmbiguousAndKeepsTheOriginal() {
    ConnectException refused = new ConnectException("Connection refused");
    IOException hidden = SentBefore.hidden(refused, "a head had gone out");

    assertEquals(Classification.AMBIGUOUS,
        Classifier.defaults().classify(hidden).orElseThrow().classification());
    assertSame(refused, hidden.getSuppressed()[0]);
    assertTrue(hidden.getMessage().contains("ConnectException (Connection refused)"), hidden.getMessage());
    assertTrue(hidden.getMessage().endsWith("a head had gone out"), hidden.getMessage());
  }
}
