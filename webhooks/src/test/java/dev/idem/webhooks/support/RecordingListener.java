package dev.idem.webhooks.support;

import dev.idem.webhooks.RejectionReason;
import dev.idem.webhooks.WebhookListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records what a receiver and a processor report. Thread-safe. */
public final class RecordingListener implements WebhookListener {
  public final List<String> events = new CopyOnWriteArrayList<>();
  public final List<RejectionReason> rejections = new CopyOnWriteArrayList<>();

  @Override
  public void accepted(String source, String eventType) {
    events.add("accepted " + eventType);
  }

  @Override
  public void duplicate(String source) {
    events.add("duplicate");
  }

  @Override
  public void rejected(String source, RejectionReason reason) {
    rejections.add(reason);
    events.add("rejected " + reason.tag());
  }

  @Override
  public void processed(String source, String eventType, Duration delay, int attempts) {
    events.add("processed " + eventType + " after " + attempts);
  }

  @Override
  public void retryScheduled(String source, String eventType, Duration delay) {
    events.add("retry " + eventType + " in " + delay);
  }

  @Override
  public void deadLettered(String source, String eventType) {
    events.add("dead " + eventType);
  }
}
