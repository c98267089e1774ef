package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

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

  private static void assertMessage(Executable call, String setting, String whatToDo) {
    String m = message(call);
    assertTrue(m.contains(setting) && m.contains(whatToDo), m);
  }

  private static String message(Executable call) {
    RuntimeException e = assertThrows(RuntimeException.class, call);
    return String.valueOf(e.getMessage());
  }
}
