package dev.idem.core.internal;

import static dev.idem.core.support.Props.qt;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.idem.core.spi.RequestSnapshot;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The secret rule's form check reads a Content-Type without substrings on every keyed call; it must
 * take for a form exactly the types the earlier check did ({@code trim()} of the part before any
 * {@code ;}, then {@code equalsIgnoreCase}), whatever the spacing, case and parameters: a form taken
 * for something else would journal a credential in clear, and the reverse would refuse a request.
 */
class SecretFilterFormTypeProperties {
  private static final String FORM = "application/x-www-form-urlencoded";
  private static final List<String> TYPES = List.of(FORM, "APPLICATION/X-WWW-FORM-URLENCODED",
      "Application/X-Www-Form-Urlencoded", "application/json", "application/x-www-form-urlencode",
      "application/x-www-form-urlencodedx", "xapplication/x-www-form-urlencoded", "multipart/form-data", "",
      "application/x-www-form-urlencoded\u0131", "application/x-www-form-urlencoded\u212a");
  private static final List<String> SPACES = List.of("", " ", "  ", "\t", "\u0000", "\u001f", "\u00a0", "\u2003");
  private static final List<String> PARAMETERS = List.of("", ";", "; charset=utf-8", ";charset=UTF-8 ",
      "; a=b; c=d", ";;");

  private final SecretFilter filter = new SecretFilter(Set.of(), Set.of(), Set.of());

  @Test
  void aFormIsWhatTrimThenEqualsIgnoreCaseSaid() {
    byte[] credential = "password=hunter2".getBytes(StandardCharsets.UTF_8);
    // Both answers must come up, or the property would hold vacuously.
    AtomicInteger forms = new AtomicInteger();
    AtomicInteger others = new AtomicInteger();
    qt(3000).forAll(longs().all()).checkAssert(seed -> {
      Random random = new Random(seed);
      String type = pick(random, SPACES) + pick(random, TYPES) + pick(random, SPACES) + pick(random, PARAMETERS);
      boolean form = earlierIsForm(type);
      (form ? forms : others).incrementAndGet();
      assertEquals(form, filter.findInFormBody(type, credential) != null, "'" + type + "'");
      RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://h.example/token"))
          .body(credential, type).build();
      if (form) {
        assertThrows(IllegalArgumentException.class, () -> filter.checkFormBody(request, "op"), "'" + type + "'");
      } else {
        filter.checkFormBody(request, "op");
      }
    });
    assertTrue(forms.get() > 100 && others.get() > 100, forms + " forms, " + others + " others");
  }

  private static boolean earlierIsForm(String contentType) {
    int semi = contentType.indexOf(';');
    String type = (semi < 0 ? contentType : contentType.substring(0, semi)).trim();
    return type.equalsIgnoreCase(FORM);
  }

  private static String pick(Random random, List<String> from) {
    return from.get(random.nextInt(from.size()));
  }
}
