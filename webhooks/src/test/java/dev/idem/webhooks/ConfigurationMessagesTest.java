package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Missing configuration fails with a message that names the setting and says what to give: an
 * unset {@code STRIPE_WEBHOOK_SECRET} used to fail with a bare {@code NullPointerException: secret}.
 */
class ConfigurationMessagesTest {
  @Test
  void anUnsetSecretNamesTheSourceAndTheEnvironmentVariableTheReadmeReadsItFrom() {
    String secret = System.getenv("IDEM_TEST_CERTAINLY_UNSET_SECRET");
    String m = message(() -> WebhookSource.builder("stripe", SignatureScheme.stripe()).secret(secret));
    assertTrue(m.contains("webhook source \"stripe\"") && m.contains("secret is null"), m);
    assertTrue(m.contains("STRIPE_WEBHOOK_SECRET") && m.contains("signing secret"), m);

    String other = message(() -> WebhookSource.builder("acme-pay", SignatureScheme.standardWebhooks()).secret(null));
    assertTrue(other.contains("ACME_PAY_WEBHOOK_SECRET"), other);
  }

  @Test
  void everyOtherMissingSettingIsNamedWithWhatToGive() {
    assertMessage(() -> WebhookSource.builder(null, SignatureScheme.github()), "source name", "such as \"stripe\"");
    assertMessage(() -> WebhookSource.builder("gh", null), "signature scheme", "SignatureScheme.github()");
    assertMessage(() -> WebhookSource.builder("gh", SignatureScheme.github()).tolerance(null), "tolerance",
        "Duration");
    assertMessage(() -> WebhookInbox.sqlite(null), "inbox directory", "Path.of(");
    assertMessage(() -> WebhookInbox.postgres(null), "dataSource", "PostgreSQL");
    assertMessage(() -> GenericHmac.builder(null), "signatureHeader", "header");
  }

  @Test
  void aProcessorOwnerLongerThanTheInboxColumnsIsRefusedOnTheEmbeddedInboxToo(@TempDir Path dir) {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookProcessor.Builder b = WebhookProcessor.builder(inbox);
      assertEquals("o".repeat(128), b.owner("o".repeat(128)).build().owner());
      String m = message(() -> b.owner("o".repeat(129)));
      assertTrue(m.contains("129 characters") && m.contains("at most 128"), m);
      // Characters, as PostgreSQL counts them: 128 letters outside the BMP are 256 Java chars.
      assertEquals(128, b.owner("\uD835\uDC00".repeat(128)).build().owner().codePointCount(0, 256));
    }
  }

  /**
   * The drivers store an unpaired surrogate as '?': the attempt history would name another owner
   * than the processor's. Refused as a NUL is, as the executor refuses such an owner.
   */
  @Test
  void aProcessorOwnerWithAnUnpairedSurrogateIsRefused(@TempDir Path dir) {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      String m = message(() -> WebhookProcessor.builder(inbox).owner("pod-\uD800"));
      assertTrue(m.contains("unpaired surrogate"), m);
    }
  }

  private static void assertMessage(Executable call, String setting, String whatToDo) {
    String m = message(call);
    assertTrue(m.contains(setting) && m.contains(whatToDo), m);
  }

  private static String message(Executable call) {
    RuntimeException e = assertThrows(RuntimeException.class, call);
    return String.valueOf(e.getMessage());
  }
}
