package dev.idem.webhooks;

import dev.idem.webhooks.internal.Headers;
import dev.idem.webhooks.internal.Listeners;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The framework-neutral endpoint for one source: verify, then store durably, then answer. Wire it to
 * any HTTP stack with {@link #handle(String, Map, byte[])}, or use {@link JdkWebhookHandler} or
 * {@code dev.idem.webhooks.servlet.WebhookServlet}.
 *
 * <pre>{@code
 * WebhookReceiver receiver = WebhookReceiver.builder(stripeSource, inbox).listener(metrics).build();
 * WebhookResponse r = receiver.handle("POST", headers, rawBody);
 * }</pre>
 *
 * <p>It never runs business logic: the {@link WebhookProcessor} does, from the inbox, so the sender
 * gets its answer as soon as the event is on disk and does not time out and retry for nothing. It
 * answers 2xx only after the event is durable, or when the inbox already had it. A rejected
 * delivery stores nothing and is logged at DEBUG without body, signature or secret; but a validly
 * signed delivery reusing an accepted event's id with another payload is logged at WARN with the
 * source and event id only, and told to the listener as a {@link RejectionReason#CONFLICT}
 * rejection; it is answered 2xx (see {@link RejectionReason#CONFLICT} for why).
 *
 * <p>Thread-safe; one instance serves all request threads.
 */
public final class WebhookReceiver {
  private static final Logger LOG = LoggerFactory.getLogger(WebhookReceiver.class);
  /** The largest declared body read into an array of its length before it arrives. */
  private static final int EXACT_READ_MAX = 64 * 1024;
  // Shared answers: a response is immutable, and these are the common case of every delivery.
  private static final WebhookResponse ACCEPTED = new WebhookResponse(200, "{\"status\":\"accepted\"}", Map.of());
  private static final WebhookResponse DUPLICATE = new WebhookResponse(200, "{\"status\":\"duplicate\"}", Map.of());
  private static final WebhookResponse CONFLICT = new WebhookResponse(200,
      "{\"status\":\"duplicate\",\"reason\":\"" + RejectionReason.CONFLICT.tag() + "\"}", Map.of());

  private final WebhookSource source;
  private final WebhookInbox inbox;
  private final WebhookListener listener;

  private WebhookReceiver(Builder b) {
    this.source = b.source;
    this.inbox = b.inbox;
    this.listener = b.listener;
  }

  /**
   * {@return a builder}
   *
   * @param source the sender this endpoint serves
   * @param inbox where accepted events go
   * @throws IllegalArgumentException if the inbox was opened read-only
   */
  public static Builder builder(WebhookSource source, WebhookInbox inbox) {
    Objects.requireNonNull(source, "source");
    return new Builder(source, WebhookInbox.writable(inbox, "a WebhookReceiver"));
  }

  /**
   * Handles one delivery whose body is already in memory.
   *
   * @param method the HTTP method; only POST is accepted
   * @param headers the request headers, names in any case
   * @param rawBody the raw body bytes
   * @return the answer; never throws for a bad delivery or a failed store
   */
  public WebhookResponse handle(String method, Map<String, ? extends List<String>> headers, byte[] rawBody) {
    return handle(method, headers, rawBody, true);
  }

  /** @param copyBody as {@link WebhookSource#verify(Map, byte[], boolean)} */
  private WebhookResponse handle(String method, Map<String, ? extends List<String>> headers, byte[] rawBody,
      boolean copyBody) {
    if (!"POST".equalsIgnoreCase(method)) {
      return new WebhookResponse(405, "{\"status\":\"method not allowed\"}", Map.of("Allow", "POST"));
    }
    VerifiedWebhook verified;
    try {
      verified = source.verify(headers, rawBody, copyBody);
    } catch (WebhookRejectedException e) {
      return rejected(e);
    }
    AcceptResult result;
    try {
      result = inbox.accept(verified);
    } catch (WebhookInboxException e) {
      LOG.warn("webhook from {} not stored, answered 503 so that the sender retries: {}", source.name(),
          e.getMessage());
      return new WebhookResponse(503, "{\"status\":\"unavailable\"}", Map.of("Retry-After", "5"));
    }
    switch (result) {
      case ACCEPTED -> {
        tell(new WebhookActivity.Accepted(source.name(), verified.eventType()));
        return ACCEPTED;
      }
      case DUPLICATE -> {
        tell(new WebhookActivity.Duplicate(source.name()));
        return DUPLICATE;
      }
      case CONFLICT -> {
        // Not a byte-for-byte retry: a sender's bug, a forgery under a reused id, or a sender that
        // renders some fields again on each delivery. Never dropped unseen (seed 001: same key, other
        // content is a conflict): WARN and a rejection of its own. But answered 2xx: a sender retries
        // a non-2xx for days and may then disable the endpoint, and none of its retries could change
        // the answer; the accepted event is the one that gets processed. WARN, never the body.
        LOG.warn("webhook {}/{}: a validly signed delivery reuses the id of an accepted event with another"
            + " payload; answered 2xx (conflict), not stored: the accepted event is kept unchanged and is the"
            + " one processed. Check the sender's side for why the id was reused", source.name(), verified.eventId());
        tell(new WebhookActivity.Rejected(source.name(), RejectionReason.CONFLICT));
        return CONFLICT;
      }
      default -> {
        // A 2xx, so that a sender that lost our first answer and re-sent the same request stops.
        LOG.debug("webhook from {} rejected: replay of an accepted signature", source.name());
        tell(new WebhookActivity.Rejected(source.name(), RejectionReason.REPLAY));
        return new WebhookResponse(200, "{\"status\":\"duplicate\",\"reason\":\"replay\"}", Map.of());
      }
    }
  }

  /**
   * Handles one delivery, reading at most the source's body cap (plus one byte) from {@code body}:
   * a longer body is rejected as TOO_LARGE without being buffered. A {@code Content-Length} over the
   * cap is rejected before reading. Either way the rest of the body stays unread on the connection,
   * so that answer carries {@code Connection: close}: a server that finds the rest after the answer
   * closes the connection (Jetty 12; the JDK's HttpServer past the 64 KiB it drains), and without
   * the header the sender would send its next delivery on it and fail.
   *
   * @param method the HTTP method
   * @param headers the request headers
   * @param body the request body; not closed here
   * @return the answer
   * @throws IOException if reading the body fails
   */
  public WebhookResponse handle(String method, Map<String, ? extends List<String>> headers, InputStream body)
      throws IOException {
    int cap = source.maxBodyBytes();
    long declared = contentLength(headers);
    if (declared > cap) {
      return leftUnread(rejected(source.tooLarge(declared)));
    }
    byte[] bytes = declared >= 0 && declared <= EXACT_READ_MAX ? readDeclared(body, (int) declared, cap)
        : body.readNBytes((int) Math.min(Integer.MAX_VALUE, (long) cap + 1)); // cap may be Integer.MAX_VALUE
    if (bytes.length > cap) {
      return leftUnread(rejected(source.tooLarge(-1)));
    }
    // read for this delivery and held nowhere else: the verified event need not copy it
    return handle(method, headers, bytes, false);
  }

  /**
   * A body that declared its length (at most the cap), read into an array of that length:
   * {@code readNBytes(cap + 1)} fills buffers of several KiB to return a body of a few hundred
   * bytes. A stream that holds more than it declared is read on to the cap plus one byte, as one
   * that declared nothing; one that holds less gives what it holds. Only up to
   * {@link #EXACT_READ_MAX}: a larger declared length is not allocated before its bytes arrive.
   */
  private static byte[] readDeclared(InputStream body, int declared, int cap) throws IOException {
    byte[] bytes = new byte[declared];
    int n = body.readNBytes(bytes, 0, declared);
    if (n < declared) {
      return Arrays.copyOf(bytes, n);
    }
    int next = body.read();
    if (next < 0) {
      return bytes;
    }
    byte[] rest = body.readNBytes(cap - declared);
    byte[] all = Arrays.copyOf(bytes, declared + 1 + rest.length);
    all[declared] = (byte) next;
    System.arraycopy(rest, 0, all, declared + 1, rest.length);
    return all;
  }

  private static long contentLength(Map<String, ? extends List<String>> headers) {
    try {
      return Long.parseLong(Objects.requireNonNullElse(Headers.of(headers).first("Content-Length"), "-1"));
    } catch (NumberFormatException ignored) {
      return -1;
    }
  }

  private WebhookResponse rejected(WebhookRejectedException e) {
    LOG.debug("webhook from {} rejected: {}", source.name(), e.getMessage());
    tell(new WebhookActivity.Rejected(source.name(), e.reason()));
    int status = switch (e.reason()) {
      case SIGNATURE -> 401;
      case TOO_LARGE -> 413;
      case REPLAY, CONFLICT -> 200;
      default -> 400;
    };
    return new WebhookResponse(status, "{\"status\":\"rejected\",\"reason\":\"" + e.reason().tag() + "\"}", Map.of());
  }

  /** The answer to a delivery whose body is not read to its end: the connection closes after it. */
  private static WebhookResponse leftUnread(WebhookResponse r) {
    return new WebhookResponse(r.status(), r.body(), Map.of("Connection", "close"));
  }

  private void tell(WebhookActivity activity) {
    Listeners.tell(listener, activity);
  }

  /** {@return the source this endpoint serves} */
  public WebhookSource source() {
    return source;
  }

  /** Configures a receiver. Not thread-safe. */
  public static final class Builder {
    private final WebhookSource source;
    private final WebhookInbox inbox;
    private WebhookListener listener = WebhookListener.none();

    private Builder(WebhookSource source, WebhookInbox inbox) {
      this.source = source;
      this.inbox = inbox;
    }

    /**
     * Sets the listener that hears accepts, duplicates and rejections.
     *
     * @param listener hears accepts, duplicates and rejections; default none
     * @return this builder
     */
    public Builder listener(WebhookListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /** {@return the receiver} */
    public WebhookReceiver build() {
      return new WebhookReceiver(this);
    }
  }
}
