package dev.idem.webhooks.support;

import dev.idem.webhooks.RejectionReason;
import dev.idem.webhooks.WebhookActivity;
import dev.idem.webhooks.WebhookListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records what a receiver and a processor report. Thread-safe. */
public final class RecordingListener implements WebhookListener {
  public final List<String> events = new CopyOnWriteArrayList<>();
  public final List<RejectionReason> rejections = new CopyOnWriteArrayList<>();

  @Override
  public void onEvent(WebhookActivity activity) {
    if (activity instanceof WebhookActivity.Accepted a) {
      events.add("accepted " + a.eventType());
    } else if (activity instanceof WebhookActivity.Duplicate) {
      events.add("duplicate");
    } else if (activity instanceof WebhookActivity.Rejected r) {
      rejections.add(r.reason());
      events.add("rejected " + r.reason().tag());
    } else if (activity instanceof WebhookActivity.Processed p) {
      events.add("processed " + p.eventType() + " after " + p.attempts());
    } else if (activity instanceof WebhookActivity.RetryScheduled r) {
      events.add("retry " + r.eventType() + " in " + r.delay());
    } else if (activity instanceof WebhookActivity.DeadLettered d) {
      events.add("dead " + d.eventType());
    }
  }
}
