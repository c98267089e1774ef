package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.jdbc.internal.OperationTable.RowKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The filter never says "absent" of a key it was given, and rarely says "present" of one it was not. */
class KeyFilterTest {
  private final Random random = new Random(3);

  private RowKey key() {
    return new RowKey("tenant-a", "create-order", IdempotencyKey.generate(random).value());
  }

  /** Adds {@code added} random keys, then counts how many of {@code probes} others it reports present. */
  private int falsePositives(KeyFilter filter, int added, int probes) {
    for (int i = 0; i < added; i++) {
      filter.add(key());
    }
    int falsePositives = 0;
    for (int i = 0; i < probes; i++) {
      if (filter.mightContain(key())) {
        falsePositives++;
      }
    }
    return falsePositives;
  }

  @Test
  void noKeyItWasGivenIsEverReportedAbsentEvenAfterItGrew() {
    KeyFilter filter = new KeyFilter(1_000); // grows four times below
    List<RowKey> added = new ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      RowKey k = key();
      filter.add(k);
      added.add(k);
    }
    for (RowKey k : added) {
      assertTrue(filter.mightContain(k), k.toString());
    }
  }

  @Test
  void fewKeysItWasNotGivenAreReportedPresent() {
    int falsePositives = falsePositives(new KeyFilter(50_000), 50_000, 50_000);
    assertTrue(falsePositives < 50_000 * 3 / 100, falsePositives + " false positives in 50,000");
  }

  /**
   * A journal that has seen a million keys (purged or not) still looks up few new ones in H2: the
   * segments' false-positive rates add up, so later segments must be tighter.
   */
  @Test
  void fewKeysItWasNotGivenAreReportedPresentAfterItGrewTenTimes() {
    // segments of 1,024 to 1,048,576 keys, the last one half full
    int falsePositives = falsePositives(new KeyFilter(1_000), 1_100_000, 100_000);
    assertTrue(falsePositives < 100_000 * 25 / 1000, falsePositives + " false positives in 100,000");
  }

  @Test
  void theIdentityPartsAreNotConfusedWhenTheirConcatenationsMatch() {
    KeyFilter filter = new KeyFilter(1_000);
    filter.add(new RowKey("ab", "c", "k"));
    int confused = 0;
    for (int i = 0; i < 100; i++) {
      // the same characters split differently: a filter that hashed the concatenation would say "present"
      if (filter.mightContain(new RowKey("a", "bc", "k")) && filter.mightContain(new RowKey("abc", "", "k"))) {
        confused++;
      }
    }
    assertTrue(confused == 0);
  }
}
