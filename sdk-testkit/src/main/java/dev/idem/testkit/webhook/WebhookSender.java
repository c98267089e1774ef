package dev.idem.testkit.webhook;

import dev.idem.core.spi.Sleeper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Random;

/**
 * Delivers webhooks to an endpoint like a provider: signs each attempt at the clock's time, retries
 * non-2xx answers and I/O failures with exponential backoff (re-signing each retry, as Stripe and
 * Standard Webhooks senders do), sends duplicates, and shuffles batches. It can also act as an
 * attacker: {@link #signAt} with an old time replays stale deliveries, {@link #withSecret} signs
 * with a stale secret, and {@link WebhookDelivery#tampered()} changes a byte.
 *
 * <pre>{@code
 * WebhookSender sender = WebhookSender.to(uri, WebhookSigner.STRIPE, "whsec_test").build();
 * WebhookDelivery d = sender.sign("evt_1", "payment_intent.succeeded", WebhookSigner.jsonEvent(...));
 * int status = sender.send(d);
 * }</pre>
 *
 * <p>Thread-safe when its {@link Sleeper} is. The backoff sleeps through the injected sleeper.
 */
public final class WebhookSender {
  /**
   * What one {@link #deliver} did.
   *
   * @param statuses the HTTP status of each attempt, in order; -1 for an I/O failure
   * @param delivered true if an attempt got a 2xx answer
   */
  public record Outcome(List<Integer> statuses, boolean delivered) {
    /** {@return attempts made} */
    public int attempts() {
      return statuses.size();
    }
  }

  private final URI endpoint;
  private final WebhookSigner signer;
  private final String secret;
  private final Clock clock;
  private final HttpClient http;
  private final int maxAttempts;
  private final Duration baseDelay;
  private final Sleeper sleeper;

  private WebhookSender(Builder b) {
    this.endpoint = b.endpoint;
    this.signer = b.signer;
    this.secret = b.secret;
    this.clock = b.clock;
    this.http = b.http;
    this.maxAttempts = b.maxAttempts;
    this.baseDelay = b.baseDelay;
    this.sleeper = b.sleeper;
  }

  /**
   * {@return a builder}
   *
   * @param endpoint where to POST
   * @param signer the provider's scheme
   * @param secret the shared secret
   */
  public static Builder to(URI endpoint, WebhookSigner signer, String secret) {
    return new Builder(endpoint, signer, secret);
  }

  /**
   * Signs a delivery now, by the sender's clock.
   *
   * @param eventId the id
   * @param eventType the type
   * @param body the raw body
   * @return the delivery
   */
  public WebhookDelivery sign(String eventId, String eventType, byte[] body) {
    return signAt(clock.instant(), eventId, eventType, body);
  }

  /**
   * Signs a delivery at a chosen time: in the past to replay a stale delivery.
   *
   * @param at the signing time
   * @param eventId the id
   * @param eventType the type
   * @param body the raw body
   * @return the delivery
   */
  public WebhookDelivery signAt(Instant at, String eventId, String eventType, byte[] body) {
    return signer.sign(secret, eventId, eventType, at, body);
  }

  /**
   * {@return a sender like this one that signs with {@code otherSecret}}
   *
   * @param otherSecret for example a secret rotated out
   */
  public WebhookSender withSecret(String otherSecret) {
    return new Builder(endpoint, signer, otherSecret).clock(clock).httpClient(http)
        .retries(maxAttempts, baseDelay, sleeper).build();
  }

  /**
   * POSTs a delivery once.
   *
   * @param d the delivery
   * @return the status
   * @throws IOException if the request fails
   * @throws InterruptedException if interrupted
   */
  public int send(WebhookDelivery d) throws IOException, InterruptedException {
    HttpRequest.Builder r = HttpRequest.newBuilder(endpoint).timeout(Duration.ofSeconds(30))
        .POST(HttpRequest.BodyPublishers.ofByteArray(d.body()));
    d.headers().forEach(r::header);
    return http.send(r.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  /**
   * Delivers an event like a provider: re-signed at each attempt, retried with backoff
   * ({@code baseDelay × 2^(n-1)}) until a 2xx or the attempts run out.
   *
   * @param eventId the id
   * @param eventType the type
   * @param body the raw body
   * @return the statuses seen (-1 for an I/O failure) and whether a 2xx came
   * @throws InterruptedException if interrupted
   */
  public Outcome deliver(String eventId, String eventType, byte[] body) throws InterruptedException {
    List<Integer> statuses = new ArrayList<>();
    for (int attempt = 1; attempt <= maxAttempts; attempt++) {
      int status;
      try {
        status = send(sign(eventId, eventType, body));
      } catch (IOException e) {
        status = -1;
      }
      statuses.add(status);
      if (status >= 200 && status < 300) {
        return new Outcome(List.copyOf(statuses), true);
      }
      if (attempt < maxAttempts) {
        sleeper.sleep(baseDelay.multipliedBy(1L << Math.min(20, attempt - 1)));
      }
    }
    return new Outcome(List.copyOf(statuses), false);
  }

  /**
   * POSTs each delivery once, in an order shuffled by {@code random} (providers do not promise order).
   *
   * @param deliveries what to send; duplicates allowed
   * @param random the shuffle's randomness (seed it)
   * @return the statuses, in the order sent
   * @throws IOException if a request fails
   * @throws InterruptedException if interrupted
   */
  public List<Integer> sendShuffled(List<WebhookDelivery> deliveries, Random random)
      throws IOException, InterruptedException {
    List<WebhookDelivery> order = new ArrayList<>(deliveries);
    Collections.shuffle(order, random);
    List<Integer> statuses = new ArrayList<>();
    for (WebhookDelivery d : order) {
      statuses.add(send(d));
    }
    return statuses;
  }

  /** Configures a sender. Not thread-safe. */
  public static final class Builder {
    private final URI endpoint;
    private final WebhookSigner signer;
    private final String secret;
    private Clock clock = Clock.systemUTC();
    private HttpClient http;
    private int maxAttempts = 5;
    private Duration baseDelay = Duration.ofMillis(100);
    private Sleeper sleeper = Sleeper.system();

    private Builder(URI endpoint, WebhookSigner signer, String secret) {
      this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
      this.signer = Objects.requireNonNull(signer, "signer");
      this.secret = Objects.requireNonNull(secret, "secret");
    }

    /**
     * Sets the clock whose time the sender signs.
     *
     * @param clock the signing clock; default system UTC
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Sets the HTTP client the sender posts with.
     *
     * @param http the client; default a new HTTP/1.1 client
     * @return this builder
     */
    public Builder httpClient(HttpClient http) {
      this.http = Objects.requireNonNull(http, "http");
      return this;
    }

    /**
     * Sets how often and how patiently {@link #deliver} retries a delivery the receiver did not
     * accept.
     *
     * @param maxAttempts attempts per {@link #deliver}, default 5
     * @param baseDelay the first backoff, doubled each retry, default 100 ms
     * @param sleeper how to wait; default {@link Sleeper#system()}; tests pass one that advances a
     *     fake clock
     * @return this builder
     */
    public Builder retries(int maxAttempts, Duration baseDelay, Sleeper sleeper) {
      if (maxAttempts < 1) {
        throw new IllegalArgumentException("maxAttempts must be positive");
      }
      this.maxAttempts = maxAttempts;
      this.baseDelay = Objects.requireNonNull(baseDelay, "baseDelay");
      this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
      return this;
    }

    /** {@return the sender} */
    public WebhookSender build() {
      if (http == null) {
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
            .build();
      }
      return new WebhookSender(this);
    }
  }
}
