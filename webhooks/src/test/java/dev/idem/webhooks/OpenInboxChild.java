package dev.idem.webhooks;

/**
 * A child JVM that opens an embedded inbox ({@link WebhookInbox#sqlite}). Prints the outcome and
 * exits 0 if the open was refused ({@link WebhookInboxException}), 1 if it succeeded, 2 on anything else.
 */
public final class OpenInboxChild {
  private OpenInboxChild() {}

  public static void main(String[] args) {
    try (WebhookInbox inbox = WebhookInbox.sqlite(java.nio.file.Path.of(args[0])).open()) {
      System.out.println("OPENED " + inbox);
      System.exit(1);
    } catch (WebhookInboxException e) {
      System.out.println("REFUSED " + e.getMessage());
      System.exit(0);
    } catch (Throwable t) {
      System.out.println("OTHER " + t);
      System.exit(2);
    }
  }
}
