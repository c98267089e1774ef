package dev.idem.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review: {@code SecretQueryParameters.removedFrom}, whose
 * Javadoc said "linear in the query's length", found each parameter's {@code =} with
 * {@code indexOf('=', start)}, which does not stop at the parameter's {@code &}: for parameters
 * without a value ({@code a&a&a...}) every one rescanned the rest of the query. The guard runs it
 * twice per keyed request, before anything is claimed, on whatever query the client sends: 750 ms
 * of CPU for a 400 KB query (the JDK HttpServer accepts 384 KiB of headers). Counted, not timed:
 * the characters the scan reads.
 */
class SecretQueryParametersLinearTest {
  /** A query that counts the characters read from it. */
  private static final class Counted implements CharSequence {
    private final String s;
    long reads;

    Counted(String s) {
      this.s = s;
    }

    @Override
    public int length() {
      return s.length();
    }

    @Override
    public char charAt(int index) {
      reads++;
      return s.charAt(index);
    }

    @Override
    public CharSequence subSequence(int start, int end) {
      reads += end - start;
      return s.subSequence(start, end);
    }

    @Override
    public String toString() {
      return s;
    }
  }

  @Test
  void removingCredentialParametersReadsEachCharacterABoundedNumberOfTimes() {
    String query = "a&".repeat(20_000) + "access_token=x&b=2";
    Counted counted = new Counted(query);

    StringBuilder kept = SecretQueryParameters.removed(counted);

    assertEquals("a&".repeat(20_000) + "b=2", kept.toString());
    assertTrue(counted.reads <= 4L * query.length(), "read " + counted.reads + " characters of a query of "
        + query.length() + ": quadratic, not linear");
  }

  @Test
  void valuelessAndEmptyParametersAreKeptAsWritten() {
    assertNull(SecretQueryParameters.removed("a&&b=&=c&d"));
    assertEquals("a&&b=", SecretQueryParameters.removedFrom("a&&b=&access_token"));
    assertEquals("x=1", SecretQueryParameters.removedFrom("API_KEY=k&x=1"));
    assertNull(SecretQueryParameters.removedFrom("access%5Ftoken=t"));
  }
}
