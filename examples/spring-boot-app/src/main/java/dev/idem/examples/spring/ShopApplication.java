package dev.idem.examples.spring;

import dev.idem.core.IdempotencyKey;
import dev.idem.spring.client.IdempotentCall;
import dev.idem.spring.server.Idempotent;
import dev.idem.spring.webhooks.WebhookSubscription;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/**
 * The README's Spring Boot quickstart, as an app: a shop whose {@code POST /orders} is guarded
 * (one effect per {@code Idempotency-Key}), charges a payment provider through Boot's
 * {@code RestClient} (keyed and journaled by the starter), and receives the provider's webhooks
 * (verified and stored before the answer, then handled). Its configuration is
 * {@code application.properties}: the provider's URL and one webhook source.
 */
@SpringBootApplication
@RestController
public class ShopApplication {
  private final RestClient payments;

  ShopApplication(RestClient.Builder builder, @Value("${shop.payments-url}") String paymentsUrl) {
    this.payments = builder.baseUrl(paymentsUrl).build(); // Boot's builder: Idem's interceptor is on it
  }

  public static void main(String[] args) {
    SpringApplication.run(ShopApplication.class, args);
  }

  /** The guard: a retried order (the same key) runs once and gets the same answer. */
  @PostMapping("/orders")
  @Idempotent
  String order(IdempotencyKey key, @RequestBody String order) {
    // The order's key (as the guard read it, bare or quoted) is the charge's key: if this handler
    // runs again, it cannot charge twice.
    IdempotentCall charge = IdempotentCall.named("charge").withKey(key);
    return payments.post().uri("/charges").attributes(charge).contentType(MediaType.APPLICATION_JSON).body(order)
        .retrieve().body(String.class);
  }

  /** The inbox: the provider's events, verified and stored before the answer, handled after it. */
  @Bean
  WebhookSubscription chargeSucceeded() {
    return WebhookSubscription.on("charge.succeeded", event -> System.out.println("paid: " + event.eventId()));
  }
}
