package dev.idem.examples.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fetch-the-truth sample acts once, on the API's amount rather than the webhook's. */
class WebhookFetchTheTruthSampleTest {
  @TempDir
  Path dir;

  @Test
  void theHandlerActsOnceOnWhatTheApiSays() throws Exception {
    WebhookFetchTheTruthSample.Result r = WebhookFetchTheTruthSample.run(dir);
    // the handler may log before or after the second delivery's answer
    assertEquals(java.util.Set.of("delivery 1: 200", "delivery 2: 200", "fulfilled pi_1 for 1299 (the webhook said 1)"),
        java.util.Set.copyOf(r.log()));
    assertEquals(3, r.log().size());
    assertEquals(1, r.fulfilmentsByKey().size(), "one key for the one event");
    assertEquals(1, r.fulfilmentsByKey().values().iterator().next());
  }
}
