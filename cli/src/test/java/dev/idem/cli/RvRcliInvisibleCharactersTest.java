package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/cli.md ("Text from a store is escaped") promises that every command prints "the characters
 * a terminal would act on or hide" as escapes, so that two identities never print as the same row.
 * {@code TerminalText#escaped} escapes only the general categories Cc, Cf, Zl, Zp and Cs, and
 * misses the Unicode default-ignorable characters of other categories, which a terminal shows as
 * nothing: U+034F COMBINING GRAPHEME JOINER (Mn), U+17B4 KHMER VOWEL INHERENT AQ (Mn), the
 * variation selectors U+FE00..U+FE0E after a letter (Mn), and the Hangul fillers U+115F, U+3164
 * and U+FFA0 (Lo, shown blank or as nothing). A client (a tenant name is whatever the app was
 * given) makes scope {@code "acme\u034F"}: {@code journal list} prints it as {@code acme}, the same
 * as the real tenant's row, and the operator's {@code show --scope acme} or {@code redrive --scope
 * acme} then acts on the other operation than the one they looked at; neither can be pasted back.
 * The same goes for every listing that prints a store's text (webhooks, guard), all through
 * {@code TerminalText.safe}.
 */
class RvRcliInvisibleCharactersTest {
  @TempDir
  Path dir;

  @Test
  void aScopeWithAnInvisibleCharacterDoesNotListAsTheScopeWithout() throws Exception {
    Path journal = dir.resolve("journal");
    List<String> hidden = List.of("acme\u034F", "acme\u17B4", "acme\uFE00", "acme\u3164", "\u115Facme");
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
      for (String scope : concat("acme", hidden)) {
        j.begin(new NewOperation(new OperationId(scope, "create-order", IdempotencyKey.of("k-1")), null,
            Fingerprinter.defaults().fingerprint(snap), snap, Instant.now()));
      }
    }

    CliRun r = CliRun.of("journal", "list", "--dir", journal.toString());

    assertEquals(0, r.code(), r.err());
    assertAll(hidden.stream().map(scope -> () -> {
      int invisible = scope.codePoints().filter(cp -> cp != 'a' && cp != 'c' && cp != 'm' && cp != 'e').findFirst()
          .orElseThrow();
      String row = r.out().lines().filter(l -> l.contains(Character.toString(invisible))).findFirst().orElse("");
      assertFalse(r.out().contains(Character.toString(invisible)), String.format(
          "U+%04X, which a terminal shows as nothing, is printed raw; its row reads as tenant acme's: [%s]",
          invisible, row));
      assertTrue(r.out().contains(String.format("\\u%04x", invisible)),
          String.format("U+%04X is printed as an escape, as the docs promise", invisible));
    }));
  }

  private static List<String> concat(String first, List<String> rest) {
    return java.util.stream.Stream.concat(java.util.stream.Stream.of(first), rest.stream()).toList();
  }
}
